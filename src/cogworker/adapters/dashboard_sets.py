"""The dashboard's reads and actions on the scheduled, retry and dead sets.

Each queue has its own share of each set (`redis_keys.sorted_set`, layout
step 8); a page merges the shares of the queues of `cogworker:parts` and of
the migrated part (`adapters.parts`), in walk order: by score, then by
queue, then by member (`domain.bulk.order`; descending for dead).  Within
one queue's set, reads are a fixed number of round trips per page, whatever
its size.  Each set is walked by rank (`ZRANGE` by index, each call O(log N + its
count)) from where a cursor's entry is now: a cursor is the entry's score,
its key and its place among the entries sharing its score (a "tie"), so
finding it again looks at a few entries around that place, however many
share the score, and only further if the set changed there.  Every walk has
a budget of entries it may look at.

Actions are at-most-once scripts (the engine's `move_due` to put an entry
back on its queue; `dashboard_remove` to delete or kill entries, letting go
of their jobs' locks in the same step), so an entry someone else already
moved is simply not acted on twice: the caller gets False and says so.  The
store decides nothing: what to move where, which entry a cursor names and
which locks a job holds come from the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import cast

import attrs

from cogworker.adapters import located, parts, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_removal import Removal, remove
from cogworker.adapters.jobs.due import DueStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.located import Location
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes

#: Entries fetched per round trip while walking a sorted set.
WALK_BATCH = 250
#: Entries on each side of a cursor's remembered place looked at first...
NEAR = 20
#: ...and, when its entry isn't among them (the set changed there), at most this far.
FAR = 5_000
#: Entries fetched per round trip while looking that far.
FAR_BATCH = 1_000


@attrs.frozen(kw_only=True)
class Entry:
    """A sorted-set member as stored, with its score, and (when walked) its place among the
    entries sharing its score, in the walk's order."""

    member: bytes
    score: float
    tie: int | None = None
    #: The queue whose set holds it (its part of the merged sets).
    part: str = ""


@attrs.frozen(kw_only=True)
class Target:
    """An entry to find again: its score, its remembered tie (None: unknown), a test that
    tells it from the others sharing its score, and the queue whose set holds it."""

    score: float
    tie: int | None
    is_it: Callable[[bytes], bool]
    part: str = ""


@attrs.frozen(kw_only=True)
class Start:
    """Where a merged walk starts in one queue's set: a rank, and (score, rank of the first
    entry with that score) when it starts among entries sharing a score."""

    part: str
    rank: int
    first_of: tuple[float, int] | None = None


@attrs.frozen(kw_only=True)
class Found:
    """Where a target is now, in walk order: `entry` at `rank`; or (entry None: it is gone) a
    rank a little before where it was.  `first` is the rank of the first entry with its score."""

    rank: int
    first: int
    entry: Entry | None


@attrs.define
class SetStore:
    """The scheduled, retry and dead sets of one Redis, as the dashboard reads and acts on them."""

    client: RedisClient
    retention: Retention

    def size(self, sorted_set: str) -> int:
        """How many entries a sorted set holds."""
        return int(self.client.zcard(sorted_set))

    def parts(self) -> tuple[str, ...]:
        """The queues whose sets a merged read goes over (`adapters.parts.queues`)."""
        return parts.queues(cast("set[bytes]", self.client.smembers(keys.PARTS)))

    def total(self, name: str) -> int:
        """How many entries the sets `name` ("schedule", "retry" or "dead") of every queue
        hold: a `ZCARD` each, in one round trip after the parts'."""
        pipe = pipelines.pipeline(self.client)
        for part in self.parts():
            pipe.zcard(keys.sorted_set(name, part))
        return sum(int(size) for size in pipe.execute())

    def starts(self, name: str, target: Target | None, *, descending: bool) -> list[Start]:
        """Where a walk of the merged sets `name` starts in each queue's set: at the start
        without `target`; else right after the target's entry (a little before where it
        was, if it has gone) in its own set, and in the others, past the entries that come
        before it in walk order (with its score: those of queues before its queue)."""
        names = self.parts()
        if target is None:
            return [Start(part=part, rank=0) for part in names]
        others = [part for part in names if part != target.part]
        pipe = pipelines.pipeline(self.client)
        for part in others:
            ahead = part > target.part if descending else part < target.part
            pipe.zcount(keys.sorted_set(name, part), *_up_to(target.score, descending, ahead))
        counts = [int(count) for count in pipe.execute()]
        (found,) = self.find(keys.sorted_set(name, target.part), [target], descending=descending)
        rank = found.rank + 1 if found.entry is not None else found.rank
        own = Start(part=target.part, rank=rank, first_of=(target.score, found.first))
        return [own] + [
            Start(part=part, rank=count, first_of=(target.score, count))
            for part, count in zip(others, counts, strict=True)
        ]

    def walk(
        self,
        sorted_set: str,
        start: int,
        *,
        descending: bool,
        budget: int,
        first_of: tuple[float, int] | None = None,
        batch: int = WALK_BATCH,
        part: str = "",
    ) -> Iterator[Entry]:
        """Entries from rank `start` on, in walk order, at most `budget`, each with its tie
        (and `part`, the queue whose set `sorted_set` is).

        `first_of` is (score, rank of the first entry with that score) when the walk
        starts among entries sharing a score; the others' ties are counted as it goes.
        """
        previous: Entry | None = None
        for rank, entry in enumerate(
            self._range(sorted_set, start, start + budget - 1, descending, batch), start
        ):
            if first_of is not None and entry.score == first_of[0]:
                tie = rank - first_of[1]
            elif previous is not None and previous.score == entry.score:
                tie = (previous.tie or 0) + 1
            else:
                tie = 0
            previous = attrs.evolve(entry, tie=tie, part=part)
            yield previous

    def find(self, sorted_set: str, targets: Sequence[Target], *, descending: bool) -> list[Found]:
        """Where each target is now: near its remembered tie (two round trips for them all),
        else up to `FAR` entries either side (a few more, for each one that moved)."""
        pipe = pipelines.pipeline(self.client)
        for target in targets:
            pipe.zcount(sorted_set, *_before(target.score, descending))
        firsts = [int(count) for count in pipe.execute()]
        pipe = pipelines.pipeline(self.client)
        for target, first in zip(targets, firsts, strict=True):
            pipe.zrange(
                sorted_set, *_around(first, target.tie, NEAR), desc=descending, withscores=True
            )
        nearby = pipe.execute()
        return [
            _found(first, target, _low(first, target.tie, NEAR), found)
            or self._find_far(sorted_set, first, target, descending)
            for target, first, found in zip(targets, firsts, nearby, strict=True)
        ]

    def _find_far(self, sorted_set: str, first: int, target: Target, descending: bool) -> Found:
        low, high = _around(first, target.tie, FAR)
        entries = self._range(sorted_set, low, high, descending, FAR_BATCH)
        for rank, entry in enumerate(entries, low):
            if entry.score != target.score:
                break  # past the entries sharing its score
            if target.is_it(entry.member):
                return Found(rank=rank, first=first, entry=attrs.evolve(entry, tie=rank - first))
        return Found(rank=_low(first, target.tie, NEAR), first=first, entry=None)

    def _range(
        self, sorted_set: str, low: int, high: int, descending: bool, batch: int
    ) -> Iterator[Entry]:
        """Entries of ranks `low` through `high` in walk order, `batch` per round trip."""
        for start in range(low, high + 1, batch):
            count = min(batch, high + 1 - start)
            found = cast(
                "list[tuple[bytes, float]]",
                self.client.zrange(
                    sorted_set, start, start + count - 1, desc=descending, withscores=True
                ),
            )
            for member, score in found:
                yield Entry(member=as_bytes(member), score=float(score))
            if len(found) < count:
                return

    def located(self, jid: str) -> list[Location]:
        """Where each queue's jid index of the sets says `jid`'s entry is (one round trip
        after the parts': `adapters.located`)."""
        return located.locations(self.client, jid, self.parts())

    def at_score(
        self, location: Location, first: int, count: int, *, descending: bool
    ) -> list[Entry]:
        """The entries of the location's set sharing its score, from the `first` of them on
        in walk order, each with its tie (its place among them) and part."""
        found = located.at_score(self.client, location, first, count, descending=descending)
        return [
            Entry(member=member, score=score, tie=tie, part=location.queue)
            for tie, (member, score) in enumerate(found, first)
        ]

    def requeue(self, sorted_set: str, moves: Sequence[tuple[bytes, str, str]]) -> list[bool]:
        """Put (entry, queue, payload) triples of one queue's set on their queue; True where
        this call did."""
        return DueStore(self.client).move_due(sorted_set, moves) if moves else []

    def kill(
        self, sorted_set: str, part: str, removals: Sequence[Removal], now: float
    ) -> list[bool]:
        """File entries of `part`'s set in its dead set byte for byte as they are (that
        queue registered first); False where one was already gone."""
        trim = self.retention.dead_trim(now)
        head = ("zset", "kill", now, *trim)
        if part:  # the part of the empty queue name is always read
            self.client.sadd(keys.PARTS, part)
        return remove(self.client, (sorted_set, keys.dead(part)), head, removals)

    def delete(self, sorted_set: str, part: str, removals: Sequence[Removal]) -> list[bool]:
        """Remove entries from `part`'s sorted set (no hooks run); False where one was
        already gone."""
        head = ("zset", "delete", "", 0, 0)
        return remove(self.client, (sorted_set, keys.no_lock(part)), head, removals)


def _before(score: float, descending: bool) -> tuple[str, str]:
    """`ZCOUNT`'s bounds for the entries before `score` in walk order: higher scores when
    descending, lower ones else."""
    bound = f"({score!r}"
    return (bound, "+inf") if descending else ("-inf", bound)


def _up_to(score: float, descending: bool, ahead: bool) -> tuple[str, str]:
    """`ZCOUNT`'s bounds for the entries of a queue's set a merged walk from an entry of
    `score` passes over: those before `score` in walk order, and those with `score` too when
    the queue comes before the entry's (`ahead`) in walk order."""
    bound = repr(score) if ahead else f"({score!r}"
    return (bound, "+inf") if descending else ("-inf", bound)


def _low(first: int, tie: int | None, reach: int) -> int:
    return max(first, first + (tie or 0) - reach)


def _around(first: int, tie: int | None, reach: int) -> tuple[int, int]:
    """The ranks `reach` either side of a remembered tie, never before its score's first."""
    return _low(first, tie, reach), first + (tie or 0) + reach


def _found(first: int, target: Target, low: int, found: list[tuple[bytes, float]]) -> Found | None:
    for rank, (member, score) in enumerate(found, low):
        if float(score) == target.score and target.is_it(as_bytes(member)):
            entry = Entry(member=as_bytes(member), score=float(score), tie=rank - first)
            return Found(rank=rank, first=first, entry=entry)
    return None
