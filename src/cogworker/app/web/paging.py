"""Pages of the sorted sets of one kind, merged over queues, by cursor, and the walk from
where a cursor's entry is now.

A cursor is the (score, key, tie, part) of the last entry a page looked at:
`part` the queue whose set holds it.  The next page starts right after
that entry, wherever it is now in its set, however many entries share its
score (`SetStore.find`), and in every other queue's set past the entries
that come before it in walk order (`domain.bulk.order`: by score, then
queue, then member).  If that entry has gone meanwhile, the next page
starts a little before where it was: a few entries may show again, none is
skipped.

Every walk has a budget: a filtered page looks at `SCAN_LIMIT` entries at
most and says so when it stops short.  A bulk action walks the whole set,
a batch per walk (`app.web.bulk`).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_sets import Entry, Found, SetStore, Target
from cogworker.app.web.cursor import Cursor
from cogworker.app.web.entries import Filter, JobView, key_of
from cogworker.domain.bulk import order

#: Entries a filtered page looks at, at most, per request.
SCAN_LIMIT = 2_000


@attrs.frozen(kw_only=True)
class SetPage:
    """One page of a set: its rows and where the next page starts."""

    rows: tuple[JobView, ...]
    #: Where the next page starts, None at the end of the set.
    next: Cursor | None
    #: Entries looked at for this page.
    scanned: int
    #: True when the scan budget ran out before the page was full.
    limited: bool


def target_of(cursor: Cursor) -> Target:
    """What finds a cursor's entry again: its score, tie and key."""
    return Target(
        score=cursor.score,
        tie=cursor.tie,
        is_it=lambda member: key_of(member) == cursor.key,
        part=cursor.part,
    )


def _cursor_of(entry: Entry) -> Cursor:
    return Cursor(score=entry.score, key=key_of(entry.member), tie=entry.tie, part=entry.part)


def _view_of(entry: Entry) -> JobView:
    return JobView.of(entry.member, entry.score, entry.tie, entry.part)


def _order(entry: Entry) -> tuple[float, str, bytes]:
    return order(entry.score, entry.part, entry.member)


def walk_after(
    store: SetStore, name: str, target: Target | None, *, descending: bool, budget: int
) -> Iterator[Entry]:
    """The walk of every queue's set `name` merged, from the entry after `target`'s (from a
    little before where it was, if it has gone), or from the start; at most `budget`."""
    walks = [
        store.walk(
            keys.sorted_set(name, start.part), start.rank, descending=descending,
            budget=budget, first_of=start.first_of, part=start.part,
        )
        for start in store.starts(name, target, descending=descending)
    ]  # fmt: skip
    merged = heapq.merge(*walks, key=_order, reverse=descending)
    return itertools.islice(merged, budget)


def find(store: SetStore, name: str, targets: list[Target], *, descending: bool) -> list[Found]:
    """Where each target is now in its queue's set `name` (see `SetStore.find`), in order."""
    found: dict[int, Found] = {}
    for part in dict.fromkeys(target.part for target in targets):
        indexes = [index for index, target in enumerate(targets) if target.part == part]
        places = store.find(
            keys.sorted_set(name, part), [targets[i] for i in indexes], descending=descending
        )
        found.update(zip(indexes, places, strict=True))
    return [found[index] for index in range(len(targets))]


def page_of(
    store: SetStore,
    name: str,
    *,
    descending: bool,
    cursor: Cursor | None,
    where: Filter,
    per: int,
) -> SetPage:
    """The `per` rows of the sets `name` matching `where`, from `cursor` on."""
    budget = SCAN_LIMIT if where.active else per + 1
    target = None if cursor is None else target_of(cursor)
    walked = walk_after(store, name, target, descending=descending, budget=budget)
    rows: list[JobView] = []
    scanned, last = 0, None
    for entry in walked:
        if len(rows) == per and last is not None:
            return SetPage(rows=tuple(rows), next=_cursor_of(last), scanned=scanned, limited=False)
        scanned += 1
        last = entry
        view = _view_of(entry)
        if where.matches(view):
            rows.append(view)
    # The walk ended: at the set's end, or when the budget ran out (then more may follow).
    limited = scanned >= budget and last is not None
    return SetPage(
        rows=tuple(rows),
        next=_cursor_of(last) if limited and last is not None else None,
        scanned=scanned,
        limited=limited and len(rows) < per,
    )
