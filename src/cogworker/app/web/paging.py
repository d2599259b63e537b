"""Pages of a sorted set by cursor, and the bounded search behind filters and bulk actions.

A cursor is the (score, key, tie) of the last entry a page looked at; the
next page starts right after that entry, wherever it is now, however many
entries share its score (`SetStore.find`).  If that entry has gone
meanwhile, the next page starts a little before where it was: a few
entries may show again, none is skipped.

Every walk has a budget: a filtered page looks at `SCAN_LIMIT` entries at
most and says so when it stops short; a bulk action at `BULK_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from cogworker.adapters.dashboard_sets import Entry, SetStore, Target
from cogworker.app.web.entries import Filter, JobView, key_of
from cogworker.app.web.params import Cursor

#: Entries a filtered page looks at, at most, per request.
SCAN_LIMIT = 2_000
#: Entries a bulk action on "all matching" looks at, at most, per request.
BULK_LIMIT = 10_000


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


def _walk_from(
    store: SetStore, key: str, cursor: Cursor | None, *, after: bool, descending: bool, budget: int
) -> Iterator[Entry]:
    """The walk from `cursor`'s entry (`after`: from the one after it), or from the start."""
    if cursor is None:
        return store.walk(key, 0, descending=descending, budget=budget)
    (found,) = store.find(key, [target_of(cursor)], descending=descending)
    start = found.rank + 1 if after and found.entry is not None else found.rank
    first_of = (cursor.score, found.first)
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
    walked = _walk_from(store, key, cursor, after=True, descending=descending, budget=budget)
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


@attrs.frozen(kw_only=True)
class Matches:
    """What a bulk action on "all matching" acts on."""

    views: tuple[JobView, ...]
    #: The first and last entries looked at: the action stays between them,
    #: on the range its confirmation counted.
    start: Cursor | None
    through: Cursor | None
    examined: int
    #: True when the budget ran out: more entries may match after `through`.
    more: bool


def matching(
    store: SetStore,
    key: str,
    *,
    descending: bool,
    where: Filter,
    start: Cursor | None = None,
    through: Cursor | None = None,
) -> Matches:
    """The entries matching `where`, at most `BULK_LIMIT` looked at, from the set's start
    (or `start`'s entry) through `through` (or past its score).

    The bounds are what the confirmation counted, so entries that arrived
    since (a newer dead job, say) are not acted on unannounced.
    """
    views: list[JobView] = []
    examined, first, last = 0, None, None
    walked = _walk_from(store, key, start, after=False, descending=descending, budget=BULK_LIMIT)
    for entry in walked:
        if through is not None and _past(entry, through, descending):
            break
        examined += 1
        first, last = first or entry, entry
        view = _view_of(entry)
        if where.matches(view):
            views.append(view)
        if through is not None and view.key == through.key and entry.score == through.score:
            break
    else:
        return Matches(
            views=tuple(views),
            start=_cursor_of(first) if first else None,
            through=_cursor_of(last) if last else None,
            examined=examined,
            more=examined >= BULK_LIMIT,
        )
    return Matches(views=tuple(views), start=start, through=through, examined=examined, more=False)


def _past(entry: Entry, through: Cursor, descending: bool) -> bool:
    return entry.score < through.score if descending else entry.score > through.score
