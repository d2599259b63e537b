"""`create_app`: the dashboard as an ASGI app, standalone (`cogworker serve`) or mounted."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import redis
from litestar import Litestar, Request, Router
from litestar.config.csrf import CSRFConfig
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.response import Template
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from cogworker.adapters import redis_access
from cogworker.adapters.connection import connect, connect_cluster
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.redis_target import RedisTarget
from cogworker.adapters.sentinel import SentinelRefusedError, UnknownMasterError
from cogworker.app.client import Client
from cogworker.app.config import Config
from cogworker.app.web.asgi import DashboardApp
from cogworker.app.web.context import Dashboard, render
from cogworker.app.web.format import FILTERS, visible_controls
from cogworker.app.web.layout_gate import (
    STATE_KEY,
    LayoutGate,
    LayoutMismatchError,
    check_layout,
    layout_mismatch,
)
from cogworker.app.web.routes import (
    batches,
    bulk,
    cancel,
    job,
    job_metrics,
    limits,
    metrics,
    overview,
    periodic,
    queues,
    sets,
    workers,
)
from cogworker.app.web.security import CSRF_COOKIE, Authorizer, BasicAuth, host_name
from cogworker.exceptions import RedisRefusedError, RedisUnavailableError

LOGGER = logging.getLogger("cogworker.dashboard")
#: Seconds the dashboard waits for Redis (every call it makes is short): a frozen Redis
#: answers a page with a 503 in this time, not in the workers' 5 s socket timeout.
READ_TIMEOUT = 2.0
CSRF_HEADER = "x-cogworker-csrf"
_ROOT_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)*")

ROUTES = [
    overview.overview,
    overview.stats,
    overview.health,
    overview.about_page,
    workers.workers,
    workers.signal,
    workers.signal_all,
    queues.queues,
    queues.queue,
    queues.clear_confirm,
    queues.clear,
    queues.delete,
    queues.pause,
    queues.resume,
    sets.set_page,
    sets.act,
    bulk.bulk_page,
    bulk.bulk_start,
    bulk.bulk_cancel,
    bulk.bulk_progress,
    job.job,
    job.history,
    job.raw,
    cancel.cancel,
    periodic.periodic,
    periodic.enqueue_now,
    periodic.remove,
    batches.batches,
    job_metrics.job_metrics,
    job_metrics.job_class,
    metrics.metrics,
    limits.limits,
]


def normalized_root(root_path: str) -> str:
    """`/jobs/` -> `/jobs`, `/` -> ``; ValueError for anything but plain path segments."""
    root = "/" + root_path.strip("/") if root_path.strip("/") else ""
    if not _ROOT_PATH.fullmatch(root):
        raise ValueError(f"root_path {root_path!r}: use plain path segments, like /jobs")
    return root


def _templates() -> TemplateConfig[JinjaTemplateEngine]:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("cogworker.app.web", "templates"),
        autoescape=True,  # every template, whatever its name: job data is never trusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Every value a template prints (never the templates' own markup): job data can't
        # reorder or hide what is shown around it.
        finalize=_shown,
    )
    environment.filters.update(FILTERS)
    return TemplateConfig(instance=JinjaTemplateEngine.from_environment(environment))


def _shown(value: object) -> object:
    return visible_controls(value) if type(value) is str else value


def _static_dir() -> Path:
    return Path(str(resources.files("cogworker.app.web") / "static"))


def _http_error(request: Request[Any, Any, Any], error: HTTPException) -> Template:
    return render(
        request, "error", title=f"Error {error.status_code}", status_code=error.status_code,
        message=error.detail,
    )  # fmt: skip


def _redis_error(request: Request[Any, Any, Any], error: Exception) -> Template:
    LOGGER.warning("dashboard: Redis unavailable: %s", type(error).__name__)
    label = request.app.state["cogworker_dashboard"].redis_label
    return render(
        request, "error", title="Redis unavailable", status_code=503,
        message=f"{unavailable(error, label)} This page will work again once it answers.",
        # A GET can be tried again as it is: the page checks /health and reloads.
        retry=request.method == "GET",
    )  # fmt: skip


def unavailable(error: Exception, label: str) -> str:
    """What failed, in a sentence: Redis frozen (no answer in time), or not reachable."""
    if isinstance(error, redis.TimeoutError):
        return f"Redis at {label} did not answer within {READ_TIMEOUT:g} s ({error})."
    if isinstance(error, redis.ConnectionError):
        return f"Can't reach Redis at {label} ({error})."
    return f"Redis at {label} is not answering ({error})."


def _redis_refused(request: Request[Any, Any, Any], error: Exception) -> Template:
    # The client's own errors (an enqueue) carry Redis's as their cause.
    cause = error.__cause__ if isinstance(error, RedisRefusedError) else error
    found = redis_access.refusal(cause) if isinstance(cause, redis.RedisError) else None
    refused = found or type(cause).__name__
    LOGGER.warning("dashboard: Redis refused %s", refused)
    return render(
        request, "error", title="Redis refused", status_code=503,
        message=f"{refused}. Check the dashboard's Redis settings.",
    )  # fmt: skip


def _redis_answer(request: Request[Any, Any, Any], error: Exception) -> Template:
    """A command Redis refused: a key of the wrong type has a page of its own; else a 500."""
    if "WRONGTYPE" not in str(error):
        return _unexpected(request, error)
    LOGGER.warning("dashboard: a key of the wrong type on %s: %s", request.url.path, error)
    return render(
        request, "error", title="A key of the wrong type", status_code=500,
        message="A key this page reads holds another Redis type than cogworker writes "
        "(`cogworker work` names it at start). Delete or rename it.",
    )  # fmt: skip


def _unexpected(request: Request[Any, Any, Any], error: Exception) -> Template:
    LOGGER.exception("dashboard: error serving %s", request.url.path)
    return render(
        request, "error", title="Error 500", status_code=500,
        message="Something went wrong on the server; the log has the details.",
    )  # fmt: skip


def _connected(target: RedisTarget) -> RedisClient:
    """A client for the dashboard: as the workers' (`connect`), with shorter timeouts."""
    if target.cluster:
        return connect_cluster(target, timeout=READ_TIMEOUT)
    client = connect(target)
    assert isinstance(client, redis.Redis)  # (one server's: a cluster's is above)
    # Options for each connection the pool makes (it has made none yet).
    client.connection_pool.connection_kwargs.update(
        socket_timeout=READ_TIMEOUT, socket_connect_timeout=READ_TIMEOUT
    )
    return client


def create_app(
    config: Config | None = None,
    *,
    auth: BasicAuth | Authorizer | str | None = None,
    read_only: bool = False,
    root_path: str = "",
    client: RedisClient | None = None,
    csrf_secret: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
) -> DashboardApp:
    """The dashboard for `config`'s Redis, as an ASGI app.

    `auth`: `"USER:PASSWORD"` or a `BasicAuth` for HTTP basic auth, or a
    callable taking the connection and answering whether it may see the
    dashboard; None leaves access to whatever the app is mounted behind.
    `root_path`: the path the browser sees the dashboard under (`/jobs`);
    every link, asset and the CSRF cookie follow it.  Mount the result at
    that path in a Litestar app (`asgi("/jobs", is_mount=True, copy_scope=True)(dashboard)`)
    or any ASGI server.  `allowed_hosts`: the host names it answers to (any other
    `Host` is a 400); None: any (`cogworker serve` without auth names its own).
    """
    config = config or Config()
    root = normalized_root(root_path)
    target = config.redis_target()
    redis_client = client or _connected(target)
    store = DashboardStore.on(redis_client, config.retention)
    secret = csrf_secret or secrets.token_hex(32)
    dashboard = Dashboard(
        config=config,
        store=store,
        client=Client(config, client=redis_client),
        root=root,
        read_only=read_only,
        redis_label=target.label,
        # Its own key, derived: a notice's seal can never pass for a CSRF token.
        notice_key=hmac.new(secret.encode(), b"cogworker notices", hashlib.sha256).digest(),
    )
    litestar = Litestar(
        route_handlers=[
            # Every page checks the key layout first; the assets don't read Redis.
            Router("/", route_handlers=ROUTES, before_request=check_layout),
            create_static_files_router("/static", [_static_dir()]),
        ],
        template_config=_templates(),
        csrf_config=CSRFConfig(
            secret=secret,
            cookie_name=CSRF_COOKIE,
            cookie_path=root or "/",
            cookie_httponly=True,
            cookie_samesite="strict",
            header_name=CSRF_HEADER,
        ),
        exception_handlers={
            HTTPException: _http_error,
            LayoutMismatchError: layout_mismatch,
            # Before ConnectionError's handler: redis-py makes a refused AUTH one of those.
            redis.AuthenticationError: _redis_refused,
            redis.exceptions.NoPermissionError: _redis_refused,
            UnknownMasterError: _redis_refused,
            SentinelRefusedError: _redis_refused,
            redis.ConnectionError: _redis_error,
            redis.TimeoutError: _redis_error,
            RedisRefusedError: _redis_refused,
            RedisUnavailableError: _redis_error,
            redis.ResponseError: _redis_answer,
            Exception: _unexpected,
        },
        state=State({"cogworker_dashboard": dashboard, STATE_KEY: LayoutGate(store)}),
        # Bulk actions stop with the process (between two batches: each entry's move is atomic).
        on_shutdown=[dashboard.bulk.stop_all],
        openapi_config=None,
    )
    authorizer = BasicAuth.parse(auth) if isinstance(auth, str) else auth
    hosts = None if allowed_hosts is None else frozenset(map(host_name, allowed_hosts))
    return DashboardApp(litestar=litestar, root_path=root, auth=authorizer, allowed_hosts=hosts)
