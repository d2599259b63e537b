"""Periodic: each periodic job's cron, next and last run, the run in flight; enqueue now.

The schedule is what the workers' periodic managers keep in Redis
(`adapters.periodic_store`); an entry that can't be read is listed as such.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from cogworker.app.web import params
from cogworker.app.web.context import back, dashboard, render, threaded, writable
from cogworker.app.web.params import Form


@get("/periodic", name="periodic")
@threaded
def periodic(request: Request[Any, Any, Any]) -> Template:
    """The Periodic page (its live part when polled)."""
    store = dashboard(request).store
    schedule = store.schedule()
    return render(
        request,
        "periodic",
        live=True,
        title="Periodic",
        rows=schedule.rows,
        problems=[schedule.problem] if schedule.problem else [],
        now=store.now(),
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
