"""A tracked job's status, written outside a settlement (queued, working, put back)."""

from __future__ import annotations

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.scripts import Pipeline

#: A "working" mark waiting to be written: the job's queue, and when it started.
Mark = tuple[str, float]


def queue_mark(pipe: Pipeline, queue: str, jid: str, status: str, at: float, ttl: float) -> None:
    """Queue on `pipe` the write of `jid`'s status (a job of `queue`: in its slot) as
    `status` since `at`, kept `ttl` seconds.

    No jid index entry: the push or settlement writing the job's status writes one
    (`adapters.job_records`); a mark between the two is found by the index's probe.
    """
    key = keys.status(queue, jid)
    pipe.hset(key, mapping={"status": status, "update_time": at})
    pipe.expire(key, int(ttl))
