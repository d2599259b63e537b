"""Queues: each queue's size, latency and pause, its jobs, deleting one, clearing it
(confirmed), pausing and resuming it."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from cogworker.app.web import params
from cogworker.app.web.context import back, dashboard, query_of, render, threaded, writable
from cogworker.app.web.entries import JobView
from cogworker.app.web.name_refs import named_queue, queue_ref
from cogworker.app.web.params import Form
from cogworker.app.web.removal import clear_queue, delete_queued

PER_PAGE = 25
#: Pages of a queue one can go to (deeper means a slow LRANGE; the job page finds any jid).
MAX_PAGE = 400


@get("/queues", name="queues")
@threaded
def queues(request: Request[Any, Any, Any]) -> Template:
    """Every queue with its size and latency (its live part when polled)."""
    store = dashboard(request).store
    return render(
        request,
        "queues",
        live=True,
        title="Queues",
        loads=store.queues.loads(store.now()),
    )


@get("/queue", name="queue")
@threaded
def queue(request: Request[Any, Any, Any]) -> Template:
    """The jobs of one queue, the next to run first, a page at a time."""
    query = query_of(request)
    store = dashboard(request).store
    name = named_queue(store.queues, params.text(query, "name", limit=500))
    page = params.integer(query, "page", 1, MAX_PAGE, 1)
    found = store.queues.page(name, (page - 1) * PER_PAGE, PER_PAGE)
    size = found.size or 0
    return render(
        request,
        "queue",
        live=True,
        title=f"Queue {name}",
        name=name,
        size=size,
        problem=found.problem,
        page=page,
        per=PER_PAGE,
        has_next=page * PER_PAGE < size and page < MAX_PAGE,
        views=[JobView.of(raw) for raw in found.entries],
    )


@get("/queue/clear", name="queue-clear-confirm")
@threaded
def clear_confirm(request: Request[Any, Any, Any]) -> Template:
    """The confirmation of clearing a queue, stating how many jobs it would delete."""
    queues = dashboard(request).store.queues
    name = named_queue(queues, params.text(query_of(request), "name", limit=500))
    size = queues.size(name)
    return render(request, "confirm_clear", title=f"Clear {name}?", name=name, size=size)


@post("/queue/clear", name="queue-clear")
@threaded
def clear(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Delete every job of a queue, letting go of their locks (no hooks run)."""
    dash = writable(request)
    name = named_queue(dash.store.queues, params.text(params.form_values(data), "name", limit=500))
    deleted = clear_queue(dash.store.queues, name) if name else 0
    return back(request, "/queues", done="clear", n=deleted)


@post("/queue/delete", name="queue-delete")
@threaded
def delete(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Delete one job from a queue, named by its key (already gone: a message)."""
    dash = writable(request)
    form = params.form_values(data)
    queues = dash.store.queues
    name = named_queue(queues, params.text(form, "name", limit=500))
    deleted = delete_queued(queues, name, params.text(form, "key", limit=200))
    return back(
        request,
        "/queue",
        name=queue_ref(name),
        done="delete",
        n=int(deleted),
        gone=int(not deleted),
    )


@post("/queue/pause", name="queue-pause")
@threaded
def pause(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Pause a queue: no worker takes its jobs from its next fetch on (`Client.pause`)."""
    return _set_paused(request, data, paused=True)


@post("/queue/resume", name="queue-resume")
@threaded
def resume(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Let the workers take a paused queue's jobs again (`Client.resume`)."""
    return _set_paused(request, data, paused=False)


def _set_paused(request: Request[Any, Any, Any], data: Form, *, paused: bool) -> Redirect:
    dash = writable(request)
    queues = dash.store.queues
    name = named_queue(queues, params.text(params.form_values(data), "name", limit=500))
    changed = queues.set_paused(name, paused=paused) if name else False
    return back(request, "/queues", done="pause" if paused else "unpause", n=int(changed))
