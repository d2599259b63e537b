"""Periodic: each periodic job's cron, next and last run, the run in flight; enqueue now.

The schedule is what the workers' periodic managers keep in Redis
(`adapters.periodic_store`); an entry that can't be read is listed as such.
"""

from __future__ import annotations

from typing import Any

import attrs
from litestar import Request, get, post
from litestar.response import Redirect, Template

from cogworker.adapters.periodic_store import NOW, Claim, PeriodicStore, decode_entry
from cogworker.app.periodic_runs import push_run, queued_lock_ttl, run_of
from cogworker.app.web import params
from cogworker.app.web.context import back, dashboard, render, threaded, writable
from cogworker.app.web.params import Form
from cogworker.domain.cron import ScheduleEntry


@attrs.frozen(kw_only=True)
class Row:
    """One schedule entry as the page lists it (`entry` None: it couldn't be read)."""

    name: str
    entry: ScheduleEntry | None
    running: str | None


@get("/periodic", name="periodic")
@threaded
def periodic(request: Request[Any, Any, Any]) -> Template:
    """The Periodic page (its live part when polled)."""
    store = dashboard(request).store
    schedule = PeriodicStore(store.client)
    rows = [
        Row(name=name, entry=decode_entry(raw), running=schedule.running(name))
        for name, raw in sorted(schedule.schedule().items())
    ]
    return render(request, "periodic", live=True, title="Periodic", rows=rows, now=store.now())


@post("/periodic/enqueue", name="periodic-enqueue")
@threaded
def enqueue_now(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Enqueue a run of a periodic job now, outside its schedule (its ticks are unchanged).

    As a tick's run goes: through the client middleware, with its class's
    unique lock and status, and only while its previous run isn't queued or
    running (the running lock), which it then holds.
    """
    dash = writable(request)
    name = params.text(params.form_values(data), "name", limit=500)
    store = PeriodicStore(dash.store.client)
    raw = store.schedule().get(name)
    entry = decode_entry(raw) if raw is not None else None
    if entry is None:
        return back(dash, "/periodic", done="enqueue", n=0, gone=1)
    now = dash.store.now()
    claim = Claim(
        name=entry.name,
        at=now,
        action=NOW,
        expected=b"",
        if_enqueued="",
        otherwise="",
        lock_ttl=queued_lock_ttl(dash.config),
        now=now,
    )
    result, _ = push_run(store, dash.config, claim, run_of(entry, now, None))
    if result == "enqueued":
        return back(dash, "/periodic", done="enqueue", n=1)
    held = {"dropped": "stopped"}.get(result, "held")
    return back(dash, "/periodic", done="enqueue", n=0, **{held: 1})
