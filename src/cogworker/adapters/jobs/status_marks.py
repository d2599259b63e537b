"""A tracked job's status, written outside a settlement (queued, working, put back)."""

from __future__ import annotations

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.scripts import Pipeline


def queue_mark(pipe: Pipeline, jid: str, status: str, at: float, ttl: float) -> None:
    """Queue on `pipe` the write of `jid`'s status as `status` since `at`, kept `ttl` seconds."""
    pipe.hset(keys.status(jid), mapping={"status": status, "update_time": at})
    pipe.expire(keys.status(jid), int(ttl))
