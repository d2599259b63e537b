"""A bulk action on every entry of a set matching a filter, in batches, to the set's end:
the sets of every queue, merged (`paging.walk_after`).

Each batch walks `BATCH` entries from where the last one left off (the
pages' cursor, `paging.walk_after`: a few Redis calls of O(log N + BATCH)),
then acts on the matching ones with the same at-most-once scripts as the
row buttons: an entry someone else moved first counts as already gone, so
running an action again, or two at once, never moves an entry twice.
`domain.bulk` decides which entries are new to the action and where the
next batch starts.  It stops between two batches when cancelled.
"""

from __future__ import annotations

import logging

import attrs

from cogworker.adapters.dashboard_sets import Target
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.config import Config
from cogworker.app.web import paging
from cogworker.app.web.bulk_runs import BulkRun
from cogworker.app.web.entries import JobView
from cogworker.app.web.sets import Action, Fate, SetKind, fates_of
from cogworker.domain import bulk
from cogworker.domain.bulk import Mark, Position, Tally

#: Entries one batch walks (one ZRANGE, O(log N + BATCH)).
BATCH = 200
#: Entries one action script takes at most: a script's time grows with its entries (a few
#: microseconds each for a delete or kill, more with locks to release), and no dashboard
#: call should hold Redis for long (a whole batch of matches was up to ~1 ms).
ACT_BATCH = 50
LOGGER = logging.getLogger("cogworker.dashboard")


@attrs.frozen(kw_only=True)
class BulkAction:
    """What a run does: `action` on the entries of `kind`'s set matching its key's filter."""

    store: DashboardStore
    config: Config
    kind: SetKind
    action: Action

    def __call__(self, run: BulkRun) -> None:
        """Go through the whole set, a batch at a time, until its end or a cancel."""
        try:
            position, more = Position(), True
            while more and not run.stopping:
                position, more = self._batch(run, position)
            run.state = "cancelled" if more else "finished"
        except Exception as error:  # a Redis error, or a bug: its page is where it is told
            LOGGER.exception("dashboard: bulk %s on %s stopped", self.action, self.kind.slug)
            run.error = f"{type(error).__name__}: {error}"
            run.state = "failed"

    def _batch(self, run: BulkRun, position: Position) -> tuple[Position, bool]:
        """One batch: walk, act on the new matching entries; where next, and whether the set
        may go on past it."""
        walked = [
            Mark(score=entry.score, member=entry.member, tie=entry.tie or 0, part=entry.part)
            for entry in paging.walk_after(
                self.store.sets, self.kind.name, _target(position.resume),
                descending=self.kind.descending, budget=BATCH,
            )
        ]  # fmt: skip
        new = bulk.fresh(walked, position, descending=self.kind.descending)
        views = [JobView.of(mark.member, mark.score, mark.tie, mark.part) for mark in new]
        matching = [view for view in views if run.key.where.matches(view)]
        run.tally = run.tally.plus(Tally(scanned=len(new), matched=len(matching)))
        fates = self._act(matching)
        out = {
            (view.part, view.raw)
            for view, fate in zip(matching, fates, strict=True)
            if fate != "skipped"
        }
        run.tally = run.tally.plus(
            Tally(
                done=fates.count("done"), gone=fates.count("gone"), skipped=fates.count("skipped")
            )
        )
        left = [(mark.part, mark.member) in out for mark in walked]
        position = bulk.advance(position, walked, left, descending=self.kind.descending)
        return position, len(walked) == BATCH

    def _act(self, matching: list[JobView]) -> list[Fate]:
        """Do the action to the matching entries, `ACT_BATCH` per script; each one's fate."""
        now = self.store.now()
        return [
            fate
            for start in range(0, len(matching), ACT_BATCH)
            for fate in fates_of(
                self.store, self.config, self.kind, self.action,
                matching[start : start + ACT_BATCH], now, by="the dashboard (a bulk action)",
            )
        ]  # fmt: skip


def _target(resume: Mark | None) -> Target | None:
    """What finds the entry a batch starts after: its very bytes."""
    if resume is None:
        return None
    member = resume.member
    return Target(
        score=resume.score, tie=resume.tie, is_it=lambda found: found == member, part=resume.part
    )
