"""Paused queues: a flag per queue, in the queue's slot, and a global index to list them.

The truth is each queue's flag, `cogworker:{q:NAME}:paused` (a string key
that exists while the queue is paused): the fetch scripts get it in KEYS
next to the queue, so a fetch learns of a pause in the one `EVALSHA` it
runs anyway, and on Redis Cluster the flag lives on the queue's node
(docs/redis-cluster.md).  Nothing in a fetch can look for flags it isn't
given, so listing the paused queues (`paused`, the dashboard, `cogworker
queues`) needs the index, `cogworker:paused`: a plain set written by
single-key commands next to the flag, as the cluster layout asks of a
global key.  Readers trust the flag: `paused` is the index's members whose
flag exists.  The order of the writes is what keeps the index a superset
of the flags:

* pause: `SADD` index, `SET` flag, `SADD` index again (one round trip).
  A crash after the first `SADD` leaves a name listed but not paused,
  which readers skip; the second `SADD` puts back a name a concurrent
  resume took out after the first.
* resume: `DEL` flag, `SREM` index, then `EXISTS` flag: a pause that set
  the flag after this `DEL` and added its name before this `SREM` is found
  by the `EXISTS`, and the name goes back (a second round trip, only then).

So a flag without its name needs a crash in the middle of such a race.
Nothing here touches a queue's jobs: they stay where they are, and
enqueues keep landing on a paused queue.  If Redis loses its data, every
queue runs again: a pause is an operator's switch, set again by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import (
    AsyncRedisClient,
    AsyncRedisPipeline,
    RedisClient,
    RedisPipeline,
)
from cogworker.adapters.replies import as_bytes

#: A pipeline of any client.
P = TypeVar("P", bound=RedisPipeline | AsyncRedisPipeline)


def pause(client: RedisClient, queues: Sequence[str]) -> list[bool]:
    """Pause `queues`; for each, whether it was running until now."""
    return _paused_now(_pausing(pipelines.pipeline(client), queues).execute())


def resume(client: RedisClient, queues: Sequence[str]) -> list[bool]:
    """Let `queues` run again; for each, whether it was paused until now."""
    replies = _resuming(pipelines.pipeline(client), queues).execute()
    paused_again = _paused_again(queues, replies)
    if paused_again:
        client.sadd(keys.PAUSED, *paused_again)
    return _resumed_now(replies)


def paused(client: RedisClient) -> frozenset[str]:
    """The names of the paused queues: the index's members whose flag exists."""
    listed = sorted(names_of(client.smembers(keys.PAUSED)))
    return _flagged(listed, _flags(pipelines.pipeline(client), listed).execute())


async def pause_async(client: AsyncRedisClient, queues: Sequence[str]) -> list[bool]:
    """`pause` through an asyncio client."""
    return _paused_now(await _pausing(pipelines.pipeline_async(client), queues).execute())


async def resume_async(client: AsyncRedisClient, queues: Sequence[str]) -> list[bool]:
    """`resume` through an asyncio client."""
    replies = await _resuming(pipelines.pipeline_async(client), queues).execute()
    paused_again = _paused_again(queues, replies)
    if paused_again:
        await client.sadd(keys.PAUSED, *paused_again)
    return _resumed_now(replies)


async def paused_async(client: AsyncRedisClient) -> frozenset[str]:
    """`paused` through an asyncio client."""
    listed = sorted(names_of(await client.smembers(keys.PAUSED)))
    return _flagged(listed, await _flags(pipelines.pipeline_async(client), listed).execute())


def names_of(members: Iterable[bytes | str]) -> frozenset[str]:
    """The index's members as queue names (a name that isn't UTF-8 escaped, as the dashboard
    shows it: no queue cogworker pauses or fetches from has that name)."""
    return frozenset(as_bytes(name).decode("utf-8", "backslashreplace") for name in members)


def _pausing(pipe: P, queues: Sequence[str]) -> P:
    """Per queue: `SADD` index, `SET` flag if absent, `SADD` index (see the module)."""
    for name in queues:
        pipe.sadd(keys.PAUSED, name)
        pipe.set(keys.queue_paused(name), 1, nx=True)
        pipe.sadd(keys.PAUSED, name)
    return pipe


def _paused_now(replies: list[Any]) -> list[bool]:
    """Per queue, whether its `SET ... NX` made the flag."""
    return [bool(made) for made in replies[1::3]]


def _resuming(pipe: P, queues: Sequence[str]) -> P:
    """Per queue: `DEL` flag, `SREM` index, `EXISTS` flag (see the module)."""
    for name in queues:
        pipe.delete(keys.queue_paused(name))
        pipe.srem(keys.PAUSED, name)
        pipe.exists(keys.queue_paused(name))
    return pipe


def _resumed_now(replies: list[Any]) -> list[bool]:
    """Per queue, whether its `DEL` removed a flag."""
    return [bool(removed) for removed in replies[0::3]]


def _paused_again(queues: Sequence[str], replies: list[Any]) -> list[str]:
    """The queues a concurrent pause flagged again before the resume's `EXISTS`."""
    return [name for name, flag in zip(queues, replies[2::3], strict=True) if flag]


def _flags(pipe: P, names: Sequence[str]) -> P:
    for name in names:
        pipe.exists(keys.queue_paused(name))
    return pipe


def _flagged(names: Sequence[str], flags: list[Any]) -> frozenset[str]:
    return frozenset(name for name, flag in zip(names, flags, strict=True) if flag)
