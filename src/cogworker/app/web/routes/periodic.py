"""Periodic: each periodic job's cron, next and last run, the run in flight; enqueue now,
or remove it from the schedule (as `cogworker periodic remove` does).

The schedule is what the workers' periodic managers keep in Redis
(`adapters.periodic_store`), listed by name a page at a time; an entry that
can't be read is listed as such.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from cogworker.adapters.dashboard_removal import remove_periodic
from cogworker.app.web import params
from cogworker.app.web.context import back, dashboard, query_of, render, threaded, writable
from cogworker.app.web.params import Form

#: Periodic jobs a page lists: it decodes and reads the running locks of these only.
PER_PAGE = 50
#: Pages one can ask for.
MAX_PAGE = 10_000


@get("/periodic", name="periodic")
@threaded
def periodic(request: Request[Any, Any, Any]) -> Template:
    """The Periodic page, a page of the schedule at a time (its live part when polled)."""
    store = dashboard(request).store
    page = params.integer(query_of(request), "page", 1, MAX_PAGE, 1)
    schedule = store.schedule((page - 1) * PER_PAGE, PER_PAGE)
    return render(
        request,
        "periodic",
        live=True,
        title="Periodic",
        rows=schedule.rows,
        problems=[schedule.problem] if schedule.problem else [],
        now=store.now(),
        page=page,
        total=schedule.total,
        first_row=(page - 1) * PER_PAGE + 1,
        has_next=page * PER_PAGE < schedule.total,
    )


@post("/periodic/enqueue", name="periodic-enqueue")
@threaded
def enqueue_now(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Enqueue a run of a periodic job now, outside its schedule, through the client
    (`Client.enqueue_periodic`: its middleware, the class's unique lock and status)."""
    dash = writable(request)
    name = params.text(params.form_values(data), "name", limit=500)
    run = dash.client.enqueue_periodic(name)
    if run.outcome == "enqueued":
        return back(request, "/periodic", done="enqueue", n=1)
    if run.outcome == "unknown":
        return back(request, "/periodic", done="enqueue", n=0, gone=1)
    return back(request, "/periodic", done="enqueue", n=0, **{run.outcome: 1})


@post("/periodic/remove", name="periodic-remove")
@threaded
def remove(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Take a periodic job off the schedule (`dashboard_removal.remove_periodic`): no
    worker enqueues it any more; a run in flight goes on."""
    dash = writable(request)
    name = params.text(params.form_values(data), "name", limit=500)
    removed = remove_periodic(dash.client.redis, name)
    return back(request, "/periodic", done="remove", n=int(removed), gone=int(not removed))
