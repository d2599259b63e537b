"""Workers: a card per process (with its memory sparkline), the work running now,
and the quiet / resume / stop actions."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from cogworker.app.web import params
from cogworker.app.web.cards import ProcessCard, stale_after
from cogworker.app.web.context import back, dashboard, render, threaded, writable
from cogworker.app.web.params import Form
from cogworker.app.web.running import work_rows

SIGNALS = ("quiet", "resume", "stop")


@get("/workers", name="workers")
@threaded
def workers(request: Request[Any, Any, Any]) -> Template:
    """The Workers page (its live part when polled)."""
    dash = dashboard(request)
    store = dash.store.processes
    now = dash.store.now()
    processes = store.infos()
    identities = [info.identity for info in processes]
    memory = store.memory(identities, now)
    stale = stale_after(dash.config.heartbeat_interval)
    cards = [ProcessCard.of(info, memory[info.identity], now, stale) for info in processes]
    gone = {card.identity for card in cards if card.stale}
    running = work_rows(store.running_work(identities), now, gone)
    return render(
        request, "workers", live=True, title="Workers", cards=cards, work=running, now=now
    )


@post("/workers/signal", name="workers-signal")
@threaded
def signal(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Send quiet, resume or stop to one process (gone: a message, not an error)."""
    dash = writable(request)
    form = params.form_values(data)
    action = params.choice(form, "signal", SIGNALS, "")
    identity = params.text(form, "identity", limit=500)
    if not action or not identity:
        return back(request, "/workers", done="none")
    sent = dash.store.processes.signal(identity, action)
    return back(request, "/workers", done=action, n=int(sent), gone=int(not sent))


@post("/workers/signal-all", name="workers-signal-all")
@threaded
def signal_all(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Send quiet or stop to every registered process."""
    dash = writable(request)
    form = params.form_values(data)
    action = params.choice(form, "signal", ("quiet", "stop"), "")
    if not action:
        return back(request, "/workers", done="none")
    processes = dash.store.processes
    identities = processes.identities()
    sent = sum(processes.signal(identity, action) for identity in identities)
    return back(request, "/workers", done=action, n=sent, gone=len(identities) - sent)
