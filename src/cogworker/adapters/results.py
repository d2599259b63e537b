"""Reading and waiting for a job's kept result, without polling.

A result is a list of one record, `cogworker:{q:Q}:result:J`, written by
the script that settles the job (settle, ack_many, cancel, bury).  A waiter finds
Q through the jid index (`jid_index.locate`) and blocks on
`BLMOVE key key RIGHT LEFT`: moving a one-element list onto itself is atomic
and leaves it as it was, so any number of waiters are woken by one write
and each reads the record; one already there is answered at once.  A block
lasts at most `WAIT_SLICE` seconds (below the connections' socket timeout):
a longer wait is several blocks, never a poll.

A job whose index says it ended (`jid_index.ENDED`) has its result written:
one not there is gone (evicted by a Redis at its `maxmemory`), so the wait
answers so within `ENDED_GRACE`, the time the settling script, pipelined
just after that index entry, takes to land, instead of waiting out its
timeout.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import Literal, TypeAlias

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import jid_index, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import SOCKET_TIMEOUT, AsyncRedisClient, RedisClient
from cogworker.domain import payload, results

_KEEP_TEXT = f'"{results.PAYLOAD_KEY}"'.encode()
#: The longest one blocking command waits (a reply must come within the socket timeout).
WAIT_SLICE = SOCKET_TIMEOUT - 2.0
#: How long a wait gives a result whose index says the job ended to appear: the
#: settlement writes the index entry, then (same pipeline) the result.
ENDED_GRACE = 1.0
#: What a wait found: the record, no job keeping a result of that jid (or it expired),
#: the job ended but its result is gone, or the job not yet ended when the timeout was up.
Found: TypeAlias = results.Stored | Literal["not found", "gone", "timed out"]


def probe(jid: str) -> jid_index.Probe:
    """Where a result of `jid` would be in a queue's slot (for `jid_index.locate`)."""
    return lambda queue: (keys.result(queue, jid),)


@attrs.define
class Deadline:
    """How long each block of a wait lasts: 0 for one look without blocking (no time
    left, or none given), None once the time is up."""

    ends: float | None
    clock: Callable[[], float] = time.monotonic
    #: What the wait found when the time is up without a result.
    missed: Literal["gone", "timed out"] = "timed out"
    _looked: bool = False

    @classmethod
    def of(cls, timeout: float | None, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A wait of `timeout` seconds from now (None: as long as it takes)."""
        return cls(None if timeout is None else clock() + timeout, clock)

    @classmethod
    def at(
        cls,
        found: jid_index.Located,
        timeout: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> Deadline:
        """The wait for a result `found` located: `timeout` seconds (None: as long as it
        takes), at most `ENDED_GRACE` when its index says the job ended."""
        if not found.ended:
            return cls.of(timeout, clock)
        grace = ENDED_GRACE if timeout is None else min(timeout, ENDED_GRACE)
        return cls(clock() + grace, clock, "gone")

    def next_block(self) -> float | None:
        """Seconds the next block may last, 0 for a look without blocking, or None: time's up."""
        if self.ends is None:
            return WAIT_SLICE
        left = self.ends - self.clock()
        if left >= 0.001:
            return min(left, WAIT_SLICE)
        if self._looked:
            return None
        self._looked = True
        return 0


def wait(client: RedisClient, jid: str, timeout: float | None) -> Found:
    """`jid`'s result, waiting up to `timeout` seconds for it (None: as long as it takes)."""
    found = jid_index.locate(client, jid, probe(jid), result=True)
    if found is None:
        return "not found"
    key, deadline = keys.result(found.queue, jid), Deadline.at(found, timeout)
    while (block := deadline.next_block()) is not None:
        if block == 0:
            record = client.lindex(key, 0)
        else:
            record = client.blmove(key, key, _seconds(block), "RIGHT", "LEFT")  # type: ignore[arg-type]  # Redis takes fractions
        if record is not None:
            return _parsed(record)
    return deadline.missed


async def wait_async(client: AsyncRedisClient, jid: str, timeout: float | None) -> Found:
    """`wait` through a redis.asyncio client."""
    found = await jid_index.locate_async(client, jid, probe(jid), result=True)
    if found is None:
        return "not found"
    key, deadline = keys.result(found.queue, jid), Deadline.at(found, timeout)
    while (block := deadline.next_block()) is not None:
        if block == 0:
            record = await client.lindex(key, 0)
        else:
            record = await client.blmove(key, key, _seconds(block), "RIGHT", "LEFT")  # type: ignore[arg-type]  # Redis takes fractions
        if record is not None:
            return _parsed(record)
    return deadline.missed


def removed_result(
    raw: bytes, outcome: Literal["killed", "discarded"]
) -> tuple[str, results.Kept | None]:
    """The jid of the job whose payload is `raw`, removed by hand, and the result it then
    keeps (None: it keeps none, or `raw` is no job's payload: a substring test first)."""
    if _KEEP_TEXT not in raw:
        return "", None
    decoded = payload.decode(raw)
    if not is_successful(decoded):
        return "", None
    job = decoded.unwrap()
    return job.jid, results.removed_by_hand(job, outcome)


def result_key(jid: str, kept: results.Kept | None, queue: str) -> str:
    """The key a settling script writes `jid`'s result to (a placeholder in the slot of
    `queue`, the script's, when it keeps none)."""
    return keys.no_lock(queue) if kept is None else keys.result(kept.queue, jid)


def result_args(kept: results.Kept | None) -> tuple[str, int]:
    """A result as the settling scripts take it: its record ("" for none) and TTL (0: the
    job keeps no result; see _results.lua)."""
    if kept is None:
        return "", 0
    return kept.record or "", kept.keep


def queue_indexes(pipe: scripts.Pipeline, kept: Iterable[tuple[str, results.Kept | None]]) -> int:
    """Queue on `pipe`, before the settling scripts, the jid index of each (jid, result)
    keeping one, for as long as the result needs it; how many commands were queued."""
    return jid_index.queue_indexes(pipe, (
        jid_index.JidIndex(jid, k.queue, k.index_ttl, ended=k.record is not None)
        for jid, k in kept if k
    ))  # fmt: skip


def _seconds(block: float) -> float:
    # BLMOVE reads its timeout to the millisecond; 0 would mean "for ever".
    return max(math.ceil(block * 1000) / 1000, 0.001)


def _parsed(record: bytes | str) -> Found:
    stored = results.parse_record(record)
    return "not found" if stored is None else stored
