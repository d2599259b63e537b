"""Paused queues: the names in one global set, `cogworker:paused`.

A pause is not part of any job's move, so it lives outside the queues' keys:
it is written by single-key `SADD`/`SREM` only and read by the fetchers
(`FetchStore`), which is what the Redis Cluster layout allows of a global
key (docs/redis-cluster.md).  Nothing here touches a queue's jobs: they stay
where they are, and enqueues keep landing on a paused queue.  If the set is
lost (Redis losing its data), every queue runs again: the pause is an
operator's switch, set again by hand, not a record of jobs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import redis
import redis.asyncio

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.replies import as_bytes


def pause(client: redis.Redis, queues: Sequence[str]) -> list[bool]:
    """Pause `queues`; for each, whether it was running until now."""
    return _changed(_queue_changes(client.pipeline(transaction=False), queues, pausing=True))


def resume(client: redis.Redis, queues: Sequence[str]) -> list[bool]:
    """Let `queues` run again; for each, whether it was paused until now."""
    return _changed(_queue_changes(client.pipeline(transaction=False), queues, pausing=False))


def paused(client: redis.Redis) -> frozenset[str]:
    """The names of the paused queues."""
    return names_of(client.smembers(keys.PAUSED))


async def pause_async(client: redis.asyncio.Redis, queues: Sequence[str]) -> list[bool]:
    """`pause` through an asyncio client."""
    pipe = _queue_changes(client.pipeline(transaction=False), queues, pausing=True)
    return [bool(changed) for changed in await pipe.execute()]


async def resume_async(client: redis.asyncio.Redis, queues: Sequence[str]) -> list[bool]:
    """`resume` through an asyncio client."""
    pipe = _queue_changes(client.pipeline(transaction=False), queues, pausing=False)
    return [bool(changed) for changed in await pipe.execute()]


async def paused_async(client: redis.asyncio.Redis) -> frozenset[str]:
    """`paused` through an asyncio client."""
    return names_of(await client.smembers(keys.PAUSED))


def names_of(members: Iterable[bytes | str]) -> frozenset[str]:
    """The set's members as queue names (a name that isn't UTF-8 escaped, as the dashboard
    shows it: no queue cogworker fetches from has that name)."""
    return frozenset(as_bytes(name).decode("utf-8", "backslashreplace") for name in members)


P = TypeVar("P", redis.client.Pipeline, redis.asyncio.client.Pipeline)


def _queue_changes(pipe: P, queues: Sequence[str], *, pausing: bool) -> P:
    """One single-key `SADD` (or `SREM`) per queue, queued on `pipe`."""
    for name in queues:
        if pausing:
            pipe.sadd(keys.PAUSED, name)
        else:
            pipe.srem(keys.PAUSED, name)
    return pipe


def _changed(pipe: redis.client.Pipeline) -> list[bool]:
    return [bool(changed) for changed in pipe.execute()]
