"""`cogworker serve --metrics-port N`: `/metrics` alone, without auth, on 127.0.0.1:N.

The dashboard's server listens on a second socket; a request that came in
through it is answered here and never reaches the dashboard, so a scraper on
this machine needs no password and can do nothing but read the figures.  Its
`Host` must be a loopback name, so a page of another site whose name resolves
to 127.0.0.1 (DNS rebinding) can't read them either.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import attrs
import uvicorn
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web.asgi import DashboardApp
from cogworker.app.web.routes.metrics import families
from cogworker.app.web.security import LOOPBACK_NAMES, host_name
from cogworker.domain.prometheus import MEDIA_TYPE, exposition
from cogworker.exceptions import RedisUnavailableError

#: The only address the metrics port binds.
METRICS_HOST = "127.0.0.1"


@attrs.define
class MetricsOnly:
    """An ASGI app answering `GET /metrics` from `store`, and nothing else."""

    store: DashboardStore
    #: `Config.metrics_max_classes`.
    max_classes: int

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host not in LOOPBACK_NAMES:
            await _answer(send, 400, b"The metrics port answers to localhost names only.")
        elif scope.get("path") != "/metrics" or scope.get("method") != "GET":
            await _answer(send, 404, b"Only GET /metrics is served on this port.")
        else:
            await self._scrape(send)

    async def _scrape(self, send: Send) -> None:
        try:
            text = await anyio.to_thread.run_sync(self._text)
        except RedisUnavailableError as error:
            await _answer(send, 503, str(error).encode())
            return
        await _answer(send, 200, text.encode(), MEDIA_TYPE)

    def _text(self) -> str:
        return exposition(families(self.store, self.max_classes))


@attrs.define
class ByPort:
    """Requests that came in on `metrics_port` go to `metrics`, everything else to `main`."""

    main: ASGIApp
    metrics: MetricsOnly
    metrics_port: int

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server") or (None, None)
        if scope["type"] == ScopeType.HTTP and server[1] == self.metrics_port:
            await self.metrics(scope, receive, send)
        else:
            await self.main(scope, receive, send)


def serve_with_metrics_port(dashboard: DashboardApp, metrics_port: int, **options: Any) -> None:
    """Run `dashboard` as `uvicorn.run(dashboard, **options)` would, with `/metrics` also
    on 127.0.0.1:`metrics_port`, one server for both."""
    state = dashboard.litestar.state["cogworker_dashboard"]
    metrics = MetricsOnly(state.store, state.config.metrics_max_classes)
    app = ByPort(main=dashboard, metrics=metrics, metrics_port=metrics_port)
    config = uvicorn.Config(app, **options)
    metrics_socket = uvicorn.Config(app, host=METRICS_HOST, port=metrics_port).bind_socket()
    uvicorn.Server(config).run(sockets=[config.bind_socket(), metrics_socket])


async def _answer(send: Send, status: int, body: bytes, media_type: str = "text/plain") -> None:
    start: Any = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", f"{media_type}; charset=utf-8".encode()),
                    (b"cache-control", b"no-store")],
    }  # fmt: skip
    await send(start)
    await send({"type": "http.response.body", "body": body, "more_body": False})
