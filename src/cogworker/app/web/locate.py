"""Where a jid is now: running, enqueued, retrying, scheduled or dead.

Two ways, both keeping every Redis call small (the dashboard must not
block Redis for more than a few milliseconds, whatever the sizes):

* `look_at` a place a link names (`app.web.job_hint`): O(log N) in a
  sorted set, a window of a queue, the processes' current work.
* `search` for a jid typed in: the processes' current work; then, unless
  the job's own records say it ended (`plan_for`), the scheduled, retry
  and dead sets through their jid index (`adapters.located`: an `HGET`
  per queue in one round trip, then the entries of the one score it
  names); then the queues, a chunk of a few hundred entries per call (a
  window of a queue, the text found server-side: well under a
  millisecond each), until it is found or `SEARCH_ENTRIES` entries or
  `SEARCH_SECONDS` seconds were spent: then it says how far it got.
  Entries moving meanwhile may be passed over: "not found" offers to
  search again.  A job waiting on a queue is not indexed: that would
  write on every push and every fetch of every job.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import assert_never

import attrs

from cogworker.adapters.dashboard_queues import FIND_CHUNK
from cogworker.adapters.dashboard_sets import Entry
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web import paging
from cogworker.app.web.cursor import Cursor
from cogworker.app.web.entries import JobView
from cogworker.app.web.job_hint import Hint, InQueue, InSet, Running
from cogworker.app.web.paging import target_of
from cogworker.app.web.sets import KINDS, SetKind

#: A set page's slug -> how the job page tags a job found there.
SET_TAGS = {"retries": "Retrying", "scheduled": "Scheduled", "dead": "Dead"}
#: Jobs of a queue before a link's index looked at (jobs run since moved it nearer the end
#: that runs next)...
QUEUE_REACH = 2_000
#: ...and after it (a recovered job put back at that end moves the others back).
QUEUE_NEAR = 50
#: Entries one search call looks at: a window of a queue; a sorted set's sharing a score.
QUEUE_CHUNK, SET_CHUNK = FIND_CHUNK, 250
#: A search stops after this many entries looked at...
SEARCH_ENTRIES = 1_000_000
#: ...or this many seconds, whichever comes first.
SEARCH_SECONDS = 3.0
#: A set's kind by its sets' name (`schedule`, `retry`, `dead`), as the jid index names it.
KINDS_BY_NAME = {kind.name: kind for kind in KINDS.values()}
#: Tracked statuses that say the job ended: nothing to search for.
ENDED = frozenset({"complete", "discarded", "cancelled", "expired"})


@attrs.frozen(kw_only=True)
class Place:
    """Where the job was found, and the entry there."""

    tag: str
    view: JobView
    #: Where it is, as a link to its page says it.
    hint: Hint
    #: The set's page slug (for actions), or "" for a queue or a running job.
    slug: str = ""
    #: The queue, or the process identity running it.
    where: str = ""


@attrs.frozen(kw_only=True)
class Search:
    """What a search found, and how far it got."""

    place: Place | None
    #: Entries looked at.
    looked: int
    #: Why it stopped before it had searched everything ("": it hadn't).
    stopped: str = ""


#: What one search call did: the entries it looked at, and the place if it found the job.
Looked = tuple[int, Place | None]


def locate(store: DashboardStore, jid: str) -> Place | None:
    """The first place holding `jid` a search finds, or None."""
    return search(store, jid).place


def look_at(store: DashboardStore, jid: str, hint: Hint) -> Place | None:
    """The job `jid` where `hint` says it is, or None if it isn't there (any more)."""
    match hint:
        case Running():
            return _running(store, jid)
        case InQueue(queue=queue, index=index):
            return _in_queue(store, jid, queue, index)
        case InSet(slug=slug, cursor=cursor):
            return _in_set(store, jid, KINDS[slug], cursor)
        case _:
            assert_never(hint)


@attrs.frozen(kw_only=True)
class Plan:
    """Whether a search looks for the job at all, and the queue it searches first among
    the queues."""

    searched: bool
    #: The queue the jid index names ("": none): searched before the other queues.
    queue: str = ""


def plan_for(store: DashboardStore, jid: str) -> Plan:
    """How to search for `jid`, from what is recorded under its jid (each read O(1)): not
    at all if its tracked status says it ended; else its queue's list first among the
    queues, the queue its jid index entry names (`cogworker:jid:J`, docs/redis-cluster.md,
    "The jid index").

    That index says which queue the job was pushed to, not where it is now (it may be
    retrying or dead, or have no entry: plain jobs write none, a failover can lose one),
    so the other queues are searched after it.
    """
    if store.status(jid) in ENDED:
        return Plan(searched=False)
    return Plan(searched=True, queue=store.indexed_queue(jid) or "")


def search(
    store: DashboardStore,
    jid: str,
    *,
    entries: int = SEARCH_ENTRIES,
    seconds: float = SEARCH_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Search:
    """Look for `jid` everywhere, a chunk per call, within `entries` and `seconds`."""
    running = _running(store, jid)
    if running is not None:
        return Search(place=running, looked=0)
    started, looked = clock(), 0
    for count, place in _chunks(store, jid, plan_for(store, jid)):
        looked += count
        if place is not None:
            return Search(place=place, looked=looked)
        if looked >= entries:
            return Search(place=None, looked=looked, stopped=f"after {entries:,} entries")
        if clock() - started >= seconds:
            return Search(place=None, looked=looked, stopped=f"after {seconds:g} s")
    return Search(place=None, looked=looked)


def _chunks(store: DashboardStore, jid: str, plan: Plan) -> Iterator[Looked]:
    """Each search call's entries looked at, and the place if that call found the job: the
    sets through their index first (a few commands at any size), then the queues."""
    if not plan.searched:
        return
    yield from _indexed_chunks(store, jid)
    for queue in _queue_order(store.queues.names(), plan.queue):
        yield from _queue_chunks(store, jid, queue)


def _queue_order(names: Sequence[str], first: str) -> list[str]:
    """The queues to search: `first` (the index's, if any) and then the others."""
    return [first, *(name for name in names if name != first)] if first else list(names)


def _queue_chunks(store: DashboardStore, jid: str, queue: str) -> Iterator[Looked]:
    size = store.queues.size(queue) or 0
    for first in range(0, size, QUEUE_CHUNK):
        found = store.queues.find(queue, jid, first, QUEUE_CHUNK)
        yield min(QUEUE_CHUNK, size - first), _queued(jid, queue, first + QUEUE_CHUNK - 1, found)


def _indexed_chunks(store: DashboardStore, jid: str) -> Iterator[Looked]:
    """The search calls finding `jid` in a set through the sets' jid index: where each
    queue's index says it is (one round trip), then that set's entries of that score, a
    chunk per call (in the set's walk order, so each one's tie is its place among them)."""
    for location in store.sets.located(jid):
        kind = KINDS_BY_NAME[location.name]
        first = 0
        while True:
            found = store.sets.at_score(location, first, SET_CHUNK, descending=kind.descending)
            hit = next((entry for entry in found if JobView.of(entry.member).jid == jid), None)
            yield len(found), _set_place(kind, hit) if hit is not None else None
            if hit is not None or len(found) < SET_CHUNK:
                break
            first += SET_CHUNK


def _in_set(store: DashboardStore, jid: str, kind: SetKind, cursor: Cursor) -> Place | None:
    target = target_of(cursor)
    (found,) = paging.find(store.sets, kind.name, [target], descending=kind.descending)
    if found.entry is None or JobView.of(found.entry.member).jid != jid:
        return None
    return _set_place(kind, attrs.evolve(found.entry, part=cursor.part))


def _set_place(kind: SetKind, entry: Entry) -> Place:
    view = JobView.of(entry.member, entry.score, entry.tie, entry.part)
    cursor = Cursor(score=entry.score, key=view.key, tie=entry.tie, part=entry.part)
    hint = InSet(slug=kind.slug, cursor=cursor)
    return Place(tag=SET_TAGS[kind.slug], view=view, hint=hint, slug=kind.slug)


def _in_queue(store: DashboardStore, jid: str, queue: str, index: int) -> Place | None:
    """The job `jid` in the window of `queue` a link's `index` names: first the entries
    nearest the index, where a job of a queue that hasn't moved still is (a short read,
    as each entry read comes to the dashboard), then the rest of the reach."""
    near = max(0, index - QUEUE_NEAR)
    nearest = store.queues.find(queue, jid, near, index - near + QUEUE_NEAR + 1)
    found = _queued(jid, queue, index, nearest)
    first = max(0, index - QUEUE_REACH)
    if found is not None or near == first:
        return found
    return _queued(jid, queue, index, store.queues.find(queue, jid, first, near - first))


def _queued(jid: str, queue: str, index: int, found: Sequence[bytes]) -> Place | None:
    view = next((view for view in map(JobView.of, found) if view.jid == jid), None)
    if view is None:
        return None
    return Place(tag="Enqueued", view=view, hint=InQueue(queue=queue, index=index), where=queue)


def _running(store: DashboardStore, jid: str) -> Place | None:
    processes = store.processes
    for identity, threads in processes.running_work(processes.identities()).items():
        for work in threads.values():
            if work.get("jid") == jid:
                view = JobView.of(json.dumps(work).encode())
                return Place(tag="Running", view=view, hint=Running(), where=identity)
    return None
