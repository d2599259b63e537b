"""A tracked job's status, written outside a settlement (queued, working, put back)."""

from __future__ import annotations

import redis

from cogworker.adapters import redis_keys as keys


def queue_mark(pipe: redis.client.Pipeline, jid: str, status: str, at: float, ttl: float) -> None:
    """Queue on `pipe` the write of `jid`'s status as `status` since `at`, kept `ttl` seconds."""
    pipe.hset(keys.status(jid), mapping={"status": status, "update_time": at})
    pipe.expire(keys.status(jid), int(ttl))
