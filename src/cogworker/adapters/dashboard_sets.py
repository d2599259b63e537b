"""The dashboard's reads and actions on the scheduled, retry and dead sets.

Reads are a fixed number of round trips per page, whatever the size of the
set: pages are walked from a cursor with `LIMIT`, and every walk is given a
budget of entries it may look at.  Actions are at-most-once scripts (the
engine's `move_due` to put an entry back on its queue; `dashboard_remove`
to delete or kill entries, letting go of their jobs' locks in the same
step), so an entry someone else already moved is simply not acted on twice:
the caller gets False and says so.  The store decides nothing: what to move
where, and which locks a job holds, comes from the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_removal import Removal, remove
from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.replies import as_bytes

#: Entries fetched per round trip while walking a sorted set.
WALK_BATCH = 250
#: Elements `ZSCAN` is asked to look at per call while looking for a jid.
ZSCAN_COUNT = 5_000


@attrs.frozen(kw_only=True)
class Entry:
    """A sorted-set member as stored, with its score."""

    member: bytes
    score: float


@attrs.define
class SetStore:
    """The scheduled, retry and dead sets of one Redis, as the dashboard reads and acts on them."""

    client: redis.Redis
    retention: Retention

    def size(self, sorted_set: str) -> int:
        """How many entries a sorted set holds."""
        return int(self.client.zcard(sorted_set))

    def walk(
        self,
        sorted_set: str,
        start: float | None,
        *,
        descending: bool,
        budget: int,
        batch: int = WALK_BATCH,
    ) -> Iterator[Entry]:
        """Entries from score `start` on (inclusive; None: from the end), at most `budget`.

        Each round trip is one `ZRANGE ... BYSCORE LIMIT`, so the cost is
        the budget, not the size of the set.
        """
        first = repr(start) if start is not None else ("+inf" if descending else "-inf")
        last = "-inf" if descending else "+inf"
        offset = 0
        while offset < budget:
            count = min(batch, budget - offset)
            found = cast(
                "list[tuple[bytes, float]]",
                self.client.zrange(
                    sorted_set, first, last, desc=descending, byscore=True,
                    offset=offset, num=count, withscores=True,
                ),
            )  # fmt: skip
            for member, score in found:
                yield Entry(member=as_bytes(member), score=float(score))
            if len(found) < count:
                return
            offset += count

    def members_at(self, sorted_set: str, scores: Sequence[float]) -> list[list[bytes]]:
        """For each score, the members of a sorted set with exactly that score (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for score in scores:
            pipe.zrangebyscore(sorted_set, repr(score), repr(score))
        return [[as_bytes(member) for member in found] for found in pipe.execute()]

    def scan_for(self, sorted_set: str, text: str, budget: int) -> list[Entry]:
        """Members containing `text` (glob-escaped here), looking at about `budget` elements."""
        pattern = "*" + "".join("\\" + c if c in "*?[]\\" else c for c in text) + "*"
        found: list[Entry] = []
        cursor, looked = 0, 0
        while looked < budget:
            cursor, batch = self.client.zscan(sorted_set, cursor, match=pattern, count=ZSCAN_COUNT)
            found.extend(Entry(member=as_bytes(m), score=float(s)) for m, s in batch)  # type: ignore[arg-type]  # redis-py types ZSCAN's pairs loosely
            looked += ZSCAN_COUNT
            if cursor == 0:
                break
        return found

    def requeue(self, sorted_set: str, moves: Sequence[tuple[bytes, str, str]]) -> list[bool]:
        """Put (entry, queue, payload) triples on their queues; True where this call did."""
        return EnqueueStore(self.client).move_due(sorted_set, moves) if moves else []

    def kill(self, sorted_set: str, removals: Sequence[Removal], now: float) -> list[bool]:
        """File entries in dead byte for byte as they are; False where one was already gone."""
        trim = self.retention.dead_trim(now)
        return remove(self.client, (sorted_set, keys.DEAD), ("zset", "kill", now, *trim), removals)

    def delete(self, sorted_set: str, removals: Sequence[Removal]) -> int:
        """Remove entries from a sorted set (no hooks run); how many were still there."""
        head = ("zset", "delete", "", 0, 0)
        return sum(remove(self.client, (sorted_set, keys.NO_LOCK), head, removals))
