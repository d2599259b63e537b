"""What every route works with: the dashboard's state, and rendering a page or its live part."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlencode

import anyio.to_thread
import attrs
from litestar import Request
from litestar.exceptions import PermissionDeniedException
from litestar.response import Redirect, Template

from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.client import Client
from cogworker.app.config import Config
from cogworker.app.version import VERSION as VERSION  # also read by routes/overview.py
from cogworker.app.web import notices
from cogworker.app.web.asgi import NONCE_KEY
from cogworker.app.web.bulk_runs import BulkRuns
from cogworker.app.web.security import CSRF_COOKIE

#: Nav entries: (path, label).
NAV = (
    ("/", "Overview"),
    ("/workers", "Workers"),
    ("/queues", "Queues"),
    ("/scheduled", "Scheduled"),
    ("/retries", "Retries"),
    ("/dead", "Dead"),
    ("/periodic", "Periodic"),
    ("/batches", "Batches"),
    ("/job-metrics", "Metrics"),
    ("/limits", "Limits"),
)


@attrs.define
class Dashboard:
    """The dashboard's state, shared by every request."""

    config: Config
    #: Every read and every action but enqueueing.
    store: DashboardStore
    #: Enqueueing, as any producer does it (client middleware, unique locks, status).
    client: Client
    root: str
    read_only: bool
    #: The Redis URL without its password, for the footer.
    redis_label: str
    #: What seals the action notices (`notices.sealed`), made from the CSRF secret.
    notice_key: bytes
    #: The actions on everything matching a filter, running or ended, in this process.
    bulk: BulkRuns = attrs.field(factory=BulkRuns)

    def url(self, path: str, query: Mapping[str, str | int] | None = None) -> str:
        """`path` under the root path, with `query` (values URL-encoded)."""
        pairs = {name: value for name, value in (query or {}).items() if value != ""}
        return self.root + path + ("?" + urlencode(pairs) if pairs else "")


P = ParamSpec("P")
R = TypeVar("R")


def threaded(fn: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """A route body run on a worker thread: Redis calls block, the event loop must not.

    (Litestar's own `sync_to_thread=True` wraps a handler again for each of
    its paths, which breaks handlers serving several paths.)
    """

    @functools.wraps(fn)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    return run


def dashboard(request: Request[Any, Any, Any]) -> Dashboard:
    """The dashboard a request is served by."""
    found: Dashboard = request.app.state["cogworker_dashboard"]
    return found


def query_of(request: Request[Any, Any, Any]) -> dict[str, list[str]]:
    """The query parameters, each with all its values (for `params`)."""
    query = request.query_params
    return {name: list(query.getall(name)) for name in query}


def self_url(dash: Dashboard, request: Request[Any, Any, Any]) -> str:
    """This page's URL under the root, without the action-notice parameters (what polls fetch)."""
    kept = [
        (name, value)
        for name, values in query_of(request).items()
        if name not in notices.KEYS
        for value in values
    ]
    return dash.root + request.url.path + ("?" + urlencode(kept) if kept else "")


def is_fragment(request: Request[Any, Any, Any]) -> bool:
    """Whether htmx asked for the live part only (a poll)."""
    return request.headers.get("hx-request") == "true"


def render(
    request: Request[Any, Any, Any],
    template: str,
    /,
    *,
    title: str,
    status_code: int = 200,
    live: bool = False,
    **context: Any,
) -> Template:
    """The page `template`, or just its live part (`live` pages) when htmx polls for it."""
    dash = dashboard(request)
    base = {
        "root": dash.root,
        "nonce": request.scope.get("state", {}).get(NONCE_KEY, ""),
        "read_only": dash.read_only,
        "version": VERSION,
        "redis_label": dash.redis_label,
        "title": title,
        "nav": NAV,
        "path": request.url.path,
        "url": dash.url,
        "self_url": self_url(dash, request),
        "notice": notices.sentence(
            query_of(request), dash.notice_key, _browser(request), request.url.path
        ),
    }
    # Only pages with a live part answer a poll with it; others are whole pages.
    fragment = live and is_fragment(request)
    folder = "live" if fragment else "pages"
    return Template(
        template_name=f"{folder}/{template}.html",
        context={**base, "fragment": fragment, "live_part": f"live/{template}.html", **context},
        status_code=status_code,
    )


def writable(request: Request[Any, Any, Any]) -> Dashboard:
    """The dashboard, for an action; 403 in read-only mode."""
    dash = dashboard(request)
    if dash.read_only:
        raise PermissionDeniedException("The dashboard is read-only.")
    return dash


def back(request: Request[Any, Any, Any], path: str, **query: str | int) -> Redirect:
    """A 303 to `path` (a dashboard path) with `query`, the action's outcome in it sealed
    for this browser (`notices.sealed`)."""
    dash = dashboard(request)
    return Redirect(
        path=dash.url(path, notices.sealed(dash.notice_key, _browser(request), path, query)),
        status_code=303,
    )


def _browser(request: Request[Any, Any, Any]) -> str:
    """What tells this browser apart: its CSRF cookie (an action's POST always has it)."""
    return request.cookies.get(CSRF_COOKIE, "")
