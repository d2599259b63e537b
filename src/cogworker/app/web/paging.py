"""Pages of a sorted set by cursor, and the bounded search behind filters and bulk actions.

A cursor is the (score, key) of the last entry a page looked at.  The next
page starts at that score and skips the entries up to and including the
cursor's own; if that entry has gone meanwhile, the entries sharing its
score are shown again rather than skipped (a repeat, never a loss).

Every walk has a budget: a filtered page looks at `SCAN_LIMIT` entries at
most and says so when it stops short; a bulk action at `BULK_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

from cogworker.adapters.dashboard_sets import Entry, SetStore
from cogworker.app.web.entries import Filter, JobView, key_of
from cogworker.app.web.params import Cursor

#: Entries a filtered page looks at, at most, per request.
SCAN_LIMIT = 2_000
#: Entries a bulk action on "all matching" looks at, at most, per request.
BULK_LIMIT = 10_000
#: Extra entries an unfiltered page fetches, for entries sharing the cursor's score.
TIE_ALLOWANCE = 20


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


def after(entries: Iterable[Entry], cursor: Cursor | None) -> Iterator[Entry]:
    """The entries past `cursor` (see the module docstring for a vanished cursor)."""
    it = iter(entries)
    if cursor is None:
        yield from it
        return
    ties: list[Entry] = []
    for entry in it:
        if entry.score != cursor.score:
            yield from ties  # the cursor's entry has gone: show its neighbours again
            yield entry
            break
        if key_of(entry.member) == cursor.key:
            break
        ties.append(entry)
    else:
        yield from ties
    yield from it


def _cursor_of(entry: Entry) -> Cursor:
    return Cursor(score=entry.score, key=key_of(entry.member))


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
    budget = SCAN_LIMIT if where.active else per + 1 + TIE_ALLOWANCE
    start = cursor.score if cursor else None
    walked = _Counted(store.walk(key, start, descending=descending, budget=budget, batch=250))
    rows: list[JobView] = []
    scanned, last = 0, None
    for entry in after(walked, cursor):
        if len(rows) == per and last is not None:
            return SetPage(rows=tuple(rows), next=_cursor_of(last), scanned=scanned, limited=False)
        scanned += 1
        last = entry
        view = JobView.of(entry.member, entry.score)
        if where.matches(view):
            rows.append(view)
    # The walk ended: at the set's end, or when the budget ran out (then more may follow).
    limited = walked.count >= budget and last is not None
    return SetPage(
        rows=tuple(rows),
        next=_cursor_of(last) if limited and last is not None else None,
        scanned=scanned,
        limited=limited and len(rows) < per,
    )


class _Counted(Iterator[Entry]):
    """An iterator that counts what it handed out (how much of a walk's budget went)."""

    def __init__(self, entries: Iterator[Entry]) -> None:
        self._entries = entries
        self.count = 0

    def __next__(self) -> Entry:
        entry = next(self._entries)
        self.count += 1
        return entry


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
    (or `start`'s score) through `through` (or past its score).

    The bounds are what the confirmation counted, so entries that arrived
    since (a newer dead job, say) are not acted on unannounced.
    """
    views: list[JobView] = []
    examined, first, last = 0, None, None
    walked = store.walk(
        key, start.score if start else None, descending=descending, budget=BULK_LIMIT
    )
    for entry in walked:
        if through is not None and _past(entry, through, descending):
            break
        examined += 1
        first, last = first or entry, entry
        view = JobView.of(entry.member, entry.score)
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
