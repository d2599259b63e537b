"""Where a jid is now: running, enqueued, retrying, scheduled or dead.

Nothing indexes jobs by jid, so each place is searched, with a bound:
the processes' current work (a hash per process), the next
`QUEUE_SEARCH_DEPTH` jobs of each queue (one script call per queue, the
text found server-side) and each sorted set by `ZSCAN MATCH` over at most
`SET_SCAN_BUDGET` elements.  A job further back than that is reported as
"not found in the places searched", never looked for without end.
"""

from __future__ import annotations

import json

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web.entries import JobView

#: Elements of each sorted set the search looks at, at most.
SET_SCAN_BUDGET = 200_000

#: Tag -> the sorted set it is found in, searched in this order after running and enqueued.
SET_PLACES = (("Retrying", keys.RETRY, "retries"), ("Scheduled", keys.SCHEDULE, "scheduled"))
DEAD_PLACE = ("Dead", keys.DEAD, "dead")


@attrs.frozen(kw_only=True)
class Place:
    """Where the job was found, and the entry there."""

    tag: str
    view: JobView
    #: The set's page slug (for actions), or "" for a queue or a running job.
    slug: str = ""
    #: The queue, or the process identity running it.
    where: str = ""


def locate(store: DashboardStore, jid: str) -> Place | None:
    """The first place holding `jid`, or None if none of the searched places does."""
    return _running(store, jid) or _enqueued(store, jid) or _in_sets(store, jid)


def _running(store: DashboardStore, jid: str) -> Place | None:
    processes = store.processes
    for identity, threads in processes.running_work(processes.identities()).items():
        for work in threads.values():
            if work.get("jid") == jid:
                view = JobView.of(json.dumps(work).encode())
                return Place(tag="Running", view=view, where=identity)
    return None


def _enqueued(store: DashboardStore, jid: str) -> Place | None:
    for queue in store.queues.names():
        for raw in store.queues.find(queue, jid):
            view = JobView.of(raw)
            if view.jid == jid:
                return Place(tag="Enqueued", view=view, where=queue)
    return None


def _in_sets(store: DashboardStore, jid: str) -> Place | None:
    for tag, key, slug in (*SET_PLACES, DEAD_PLACE):
        for entry in store.sets.scan_for(key, jid, SET_SCAN_BUDGET):
            view = JobView.of(entry.member, entry.score)
            if view.jid == jid:
                return Place(tag=tag, view=view, slug=slug)
    return None
