"""An action on everything matching a filter: its page (the confirmation, then the run's
progress and end), starting and cancelling it, and its progress as JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from litestar import Request, get, post
from litestar.response import Redirect, Template

from cogworker.app.web import notices, params
from cogworker.app.web.bulk import BulkAction
from cogworker.app.web.bulk_runs import BulkKey
from cogworker.app.web.context import (
    back,
    dashboard,
    query_of,
    render,
    threaded,
    writable,
)
from cogworker.app.web.params import Form
from cogworker.app.web.routes.sets import action_of, filter_of, kind_of
from cogworker.app.web.sets import KINDS

PAGES = [f"/{slug}/bulk" for slug in KINDS]


def _key(request: Request[Any, Any, Any], values: Mapping[str, Sequence[str]]) -> BulkKey:
    kind = kind_of(request)
    action = action_of(values, "action", kind)
    return BulkKey(slug=kind.slug, action=action, where=filter_of(values))


def _to_page(request: Request[Any, Any, Any], key: BulkKey) -> Redirect:
    return back(request, f"/{key.slug}/bulk", action=key.action, **key.where.as_query())


@get(PAGES, name="set-bulk-page")
@threaded
def bulk_page(request: Request[Any, Any, Any]) -> Template:
    """The confirmation of an action on all matching entries, or the progress of its run."""
    key = _key(request, query_of(request))
    dash = dashboard(request)
    kind = KINDS[key.slug]
    return render(
        request,
        "bulk",
        title=f"{key.action.title()} all{' matching' if key.where.active else ''}",
        kind=kind,
        key=key,
        run=dash.bulk.get(key),
        verb=notices.ACTIONS[key.action][0],
        query={"action": key.action, **key.where.as_query()},
        total=dash.store.sets.total(kind.name),
    )


@post(PAGES, name="set-bulk")
@threaded
def bulk_start(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Start the action over the whole set (or find the one running), and show its page."""
    dash = writable(request)
    key = _key(request, params.form_values(data))
    kind = KINDS[key.slug]
    action = BulkAction(store=dash.store, config=dash.config, kind=kind, action=key.action)
    dash.bulk.start(key, dash.store.sets.total(kind.name), action)
    return _to_page(request, key)


@post([f"{page}/cancel" for page in PAGES], name="set-bulk-cancel")
async def bulk_cancel(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Stop the running action after its current batch."""
    dash = writable(request)
    key = _key(request, params.form_values(data))
    run = dash.bulk.get(key)
    if run is not None:
        run.cancel()
    return _to_page(request, key)


@get([f"{page}/progress" for page in PAGES], name="set-bulk-progress")
async def bulk_progress(request: Request[Any, Any, Any]) -> dict[str, str | int | bool]:
    """The run's state and counts ("none" when this process has no run of it)."""
    run = dashboard(request).bulk.get(_key(request, query_of(request)))
    return {"state": "none"} if run is None else run.progress()
