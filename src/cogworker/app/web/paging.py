"""Pages of a sorted set by cursor, and the walk from where a cursor's entry is now.

A cursor is the (score, key, tie) of the last entry a page looked at; the
next page starts right after that entry, wherever it is now, however many
entries share its score (`SetStore.find`).  If that entry has gone
meanwhile, the next page starts a little before where it was: a few
entries may show again, none is skipped.

Every walk has a budget: a filtered page looks at `SCAN_LIMIT` entries at
most and says so when it stops short.  A bulk action walks the whole set,
a batch per walk (`app.web.bulk`).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from cogworker.adapters.dashboard_sets import Entry, SetStore, Target
from cogworker.app.web.cursor import Cursor
from cogworker.app.web.entries import Filter, JobView, key_of

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
        score=cursor.score, tie=cursor.tie, is_it=lambda member: key_of(member) == cursor.key
    )


def _cursor_of(entry: Entry) -> Cursor:
    return Cursor(score=entry.score, key=key_of(entry.member), tie=entry.tie)


def _view_of(entry: Entry) -> JobView:
    return JobView.of(entry.member, entry.score, entry.tie)


def walk_after(
    store: SetStore, key: str, target: Target | None, *, descending: bool, budget: int
) -> Iterator[Entry]:
    """The walk from the entry after `target`'s (from a little before where it was, if it
    has gone), or from the set's start."""
    if target is None:
        return store.walk(key, 0, descending=descending, budget=budget)
    (found,) = store.find(key, [target], descending=descending)
    start = found.rank + 1 if found.entry is not None else found.rank
    first_of = (target.score, found.first)
    return store.walk(key, start, descending=descending, budget=budget, first_of=first_of)


def page_of(
    store: SetStore,
    key: str,
    *,
    descending: bool,
    cursor: Cursor | None,
    where: Filter,
    per: int,
) -> SetPage:
    """The `per` rows of the set matching `where`, from `cursor` on."""
    budget = SCAN_LIMIT if where.active else per + 1
    target = None if cursor is None else target_of(cursor)
    walked = walk_after(store, key, target, descending=descending, budget=budget)
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
