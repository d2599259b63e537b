"""The Scheduled, Retries and Dead pages' sets, and what their actions do to entries.

Actions go through at-most-once moves: an entry someone else moved first
counts as "already gone".  Deleting and killing let go of the jobs' locks
(`app.web.removal`); a kill runs the death handlers, deleting or retrying no hook:
those are an operator's decision, not a death.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.config import Config
from cogworker.app.web import paging
from cogworker.app.web.cursor import Cursor
from cogworker.app.web.entries import JobView
from cogworker.app.web.paging import target_of
from cogworker.app.web.removal import announce_kills, removals
from cogworker.domain import payload, status

Action = Literal["retry", "enqueue", "kill", "delete"]
ACTIONS: tuple[Action, ...] = ("retry", "enqueue", "kill", "delete")


@attrs.frozen(kw_only=True)
class SetKind:
    """One of the three sorted sets as its page shows it."""

    slug: str
    title: str
    #: Its sets' name: each queue has one (`redis_keys.sorted_set`).
    name: str
    descending: bool
    time_label: str
    actions: tuple[Action, ...]
    #: What the page says when the set is empty: what puts jobs there.
    empty: str


KINDS = {
    kind.slug: kind
    for kind in (
        SetKind(
            slug="scheduled", title="Scheduled", name="schedule", descending=False,
            time_label="Runs", actions=("enqueue", "delete"),
            empty="No scheduled jobs. perform_in and perform_at (or Client.enqueue_in) "
            "put a job here until its time comes.",
        ),
        SetKind(
            slug="retries", title="Retries", name="retry", descending=False,
            time_label="Next retry", actions=("retry", "kill", "delete"),
            empty="No jobs waiting to retry. A job that fails with retries left waits here "
            "for its next attempt.",
        ),
        SetKind(
            slug="dead", title="Dead", name="dead", descending=True,
            time_label="Died", actions=("retry", "delete"),
            empty="No dead jobs. A job that fails with no retries left lands here, to be "
            "retried by hand once its cause is fixed.",
        ),
    )
}  # fmt: skip


#: What an action did to one entry: acted on it, found it already gone, or skipped it
#: (not a job payload with a queue: it stays where it is).
Fate = Literal["done", "gone", "skipped"]


@attrs.frozen(kw_only=True)
class Outcome:
    """How an action went: done, already gone, and skipped (not a job with a queue)."""

    done: int = 0
    gone: int = 0
    skipped: int = 0

    @classmethod
    def of(cls, fates: Sequence[Fate]) -> Outcome:
        """The counts of what an action did to each entry."""
        return cls(
            done=fates.count("done"), gone=fates.count("gone"), skipped=fates.count("skipped")
        )


def resolve(store: SetStore, kind: SetKind, cursors: Sequence[Cursor]) -> tuple[list[JobView], int]:
    """The entries named by cursors, and how many are no longer there."""
    targets = [target_of(cursor) for cursor in cursors]
    found = paging.find(store, kind.name, targets, descending=kind.descending)
    views = [
        JobView.of(place.entry.member, place.entry.score, place.entry.tie, target.part)
        for target, place in zip(targets, found, strict=True)
        if place.entry is not None
    ]
    return views, len(cursors) - len(views)


def apply(
    store: DashboardStore,
    config: Config,
    kind: SetKind,
    action: Action,
    views: Sequence[JobView],
    now: float,
    *,
    by: str = "the dashboard",
) -> Outcome:
    """Do `action` to the entries of `kind`'s set (the caller checked it is one of its
    actions); how it went.  `by`: where a kill was asked for, as the death handlers are told."""
    return Outcome.of(fates_of(store, config, kind, action, views, now, by=by))


def fates_of(
    store: DashboardStore,
    config: Config,
    kind: SetKind,
    action: Action,
    views: Sequence[JobView],
    now: float,
    *,
    by: str = "the dashboard",
) -> list[Fate]:
    """Do `action` to the entries of `kind`'s sets; what it did to each, in order: one call
    per queue whose set holds some (each keeps to that queue's slot)."""
    fates: dict[int, Fate] = {}
    for part in dict.fromkeys(view.part for view in views):
        indexes = [index for index, view in enumerate(views) if view.part == part]
        done = _fates_in(store, config, kind, action, [views[i] for i in indexes], now, by)
        fates.update(zip(indexes, done, strict=True))
    return [fates[index] for index in range(len(views))]


def _fates_in(
    store: DashboardStore,
    config: Config,
    kind: SetKind,
    action: Action,
    views: Sequence[JobView],
    now: float,
    by: str,
) -> list[Fate]:
    """`fates_of` for entries of one queue's set."""
    part = views[0].part
    sorted_set = keys.sorted_set(kind.name, part)
    if action in ("retry", "enqueue"):
        return _requeue(store, config, sorted_set, views, now)
    if action == "kill":
        killed = store.sets.kill(sorted_set, part, removals(views), now)
        killed_views = [view for view, done in zip(views, killed, strict=True) if done]
        announce_kills(config, killed_views, by=by)
        return [_fate(done) for done in killed]
    return [_fate(done) for done in store.sets.delete(sorted_set, part, removals(views))]


def _fate(done: bool) -> Fate:
    return "done" if done else "gone"


def _requeue(
    store: DashboardStore, config: Config, sorted_set: str, views: Sequence[JobView], now: float
) -> list[Fate]:
    moves = [
        (view.raw, view.job.queue, payload.encode(view.job, enqueued_at=now))
        for view in views
        if view.job is not None
    ]
    # One answer per move, in order: an entry named twice is moved once, and "gone" the
    # second time.
    moved = iter(store.sets.requeue(sorted_set, moves))
    fates: list[Fate] = [
        _fate(next(moved)) if view.job is not None else "skipped" for view in views
    ]
    queued = [view for view, fate in zip(views, fates, strict=True) if fate == "done"]
    _mark_queued(store, config, queued, now)
    return fates


def _mark_queued(
    store: DashboardStore, config: Config, views: Sequence[JobView], now: float
) -> None:
    """Tracked jobs put back on their queue get the status the status rules say."""
    for view in views:
        job = view.job
        if job is None or not status.is_tracked(job, config.track_status):
            continue
        current = store.status(job.jid)
        known = status.status_of(current) if current is not None else None
        store.set_status(job.queue, job.jid, status.next_status(known, status.Enqueued()), now)
