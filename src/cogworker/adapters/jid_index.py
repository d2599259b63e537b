"""The jid index: which queue's slot holds a job's records, for a reader knowing the jid alone.

A job's own records (its kept result; its status, attempts and history)
live in its queue's slot, `cogworker:{q:Q}:...:J`.  The index
`cogworker:jid:J` holds Q's name.  It is a global key, so no script writes
it: a single-key SET is pipelined *before* the script writing the records
(a push, a settlement), and the writer gives it the TTL its records need
(`domain.results` for results, `adapters.job_records` for the others).
Every reader goes through `locate`: the index when it is there; else
(never written, expired, lost in a failover) each registered queue's slot
is asked whether it holds any of the jid's records (`probe`): slower, one
round trip over all queues, never wrong.

An entry written for a job's status, attempts or history alone says so
(`RECORDS_ONLY` before the queue's name): a result's waiter doesn't take it
for a job keeping its result (it would wait for a result never written).
Such an entry is never written for a job keeping its result, whose own
entry (as long as the result needs it) stands for its records too.  The
entry a job's end writes, with its result, says so (`ENDED` before the
queue's name): a waiter that then finds no result knows it is gone
(evicted) rather than still to come.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient
from cogworker.adapters.replies import as_bytes

#: The keys of a jid's records in a queue's slot (all in that one slot): `probe(queue)`.
Probe = Callable[[str], Sequence[str]]


#: What an entry written for a job's records alone starts with: a queue's name never holds
#: a control character (`domain.queues`), so the entry reads back unambiguously.
RECORDS_ONLY = "\x1e"
#: What the entry written with a job's kept result, at its end, starts with.
ENDED = "\x1d"


@attrs.frozen
class JidIndex:
    """An index entry to write: `jid`'s records are in `queue`'s slot, for `ttl` seconds;
    `records_only`: for its status, attempts or history, not a kept result; `ended`:
    written with the job's kept result, at its end."""

    jid: str
    queue: str
    ttl: int
    records_only: bool = False
    ended: bool = False

    @property
    def value(self) -> str:
        """The entry as stored."""
        if self.records_only:
            return RECORDS_ONLY + self.queue
        return ENDED + self.queue if self.ended else self.queue


@attrs.frozen
class Located:
    """Where a jid's records are: `queue`'s slot; `ended`: its index says the job ended
    with its result written (a result not there is gone, not still to come)."""

    queue: str
    ended: bool = False


def queue_indexes(pipe: scripts.Pipeline, indexes: Iterable[JidIndex | None]) -> int:
    """Queue on `pipe` the index entries given (before the script writing the records, in
    the same pipeline); how many commands were queued."""
    written = [index for index in indexes if index is not None]
    for index in written:
        pipe.set(keys.jid_index(index.jid), index.value, ex=index.ttl)
    return len(written)


def indexed(client: RedisClient, jid: str, *, result: bool = False) -> str | None:
    """The queue `jid`'s index entry names; None if there is none (one GET), or, looking
    for a `result`, if the entry was written for the job's other records alone."""
    found = _entry(client.get(keys.jid_index(jid)), result)
    return None if found is None else found.queue


def _entry(found: bytes | str | None, result: bool) -> Located | None:
    """Where an entry as stored says the records are (None: none, or not one for a
    `result`)."""
    if found is None:
        return None
    text = as_bytes(found).decode()
    if text.startswith(ENDED):
        return Located(text.removeprefix(ENDED), ended=True)
    if not text.startswith(RECORDS_ONLY):
        return Located(text)
    return None if result else Located(text.removeprefix(RECORDS_ONLY))


def locate(client: RedisClient, jid: str, probe: Probe, *, result: bool = False) -> Located | None:
    """Where `jid`'s records are: the index's queue (for a `result`, an entry of a job
    keeping one), else the first registered queue where `probe` finds one; None if none
    does."""
    found = _entry(client.get(keys.jid_index(jid)), result)
    if found is not None:
        return found
    pipe = pipelines.pipeline(client)
    pipe.smembers(keys.QUEUES)
    pipe.smembers(keys.PARTS)
    queues = _names(_registered(pipe.execute()))
    for queue in queues:
        pipe.exists(*probe(queue))
    return _first_holding(queues, pipe.execute() if queues else [])


async def locate_async(
    client: AsyncRedisClient, jid: str, probe: Probe, *, result: bool = False
) -> Located | None:
    """`locate` through a redis.asyncio client."""
    found = _entry(await client.get(keys.jid_index(jid)), result)
    if found is not None:
        return found
    pipe = pipelines.pipeline_async(client)
    pipe.smembers(keys.QUEUES)
    pipe.smembers(keys.PARTS)
    queues = _names(_registered(await pipe.execute()))
    for queue in queues:
        pipe.exists(*probe(queue))
    return _first_holding(queues, await pipe.execute() if queues else [])


def _registered(replies: Sequence[Iterable[bytes | str]]) -> set[bytes | str]:
    """The queues of the registry and of the parts' registry (two sets: two slots)."""
    return {member for reply in replies for member in reply}


def _names(members: Iterable[bytes | str]) -> list[str]:
    return sorted({as_bytes(member).decode() for member in members})


def _first_holding(queues: Sequence[str], counts: Sequence[Any]) -> Located | None:
    """The first of `queues` whose probe found a key (`counts`: EXISTS's replies)."""
    holding = (queue for queue, count in zip(queues, counts, strict=True) if count)
    return next((Located(queue) for queue in holding), None)
