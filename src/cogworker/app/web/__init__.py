"""The dashboard: `create_app(config)` is an ASGI app; `cogworker serve` runs it.

::

    from litestar import Litestar, asgi
    from cogworker.app.web import create_app

    dashboard = create_app(config, auth="admin:secret", root_path="/jobs")
    app = Litestar(route_handlers=[asgi("/jobs", is_mount=True, copy_scope=True)(dashboard)])

The names below are imported when first asked for: the inspecting commands
(`cogworker stats`, `jobs`, `retry`...) use this package's listing modules
(`entries`, `paging`, `sets`, `locate`) and so never load Litestar, which the
app needs (a third of such a command's start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cogworker.app.web.app import create_app
    from cogworker.app.web.asgi import DashboardApp
    from cogworker.app.web.security import AUTH_ENV, Authorizer, BasicAuth, is_loopback

#: Each name of the package -> the module defining it.
_HOMES = {
    "create_app": "app",
    "DashboardApp": "asgi",
    "AUTH_ENV": "security",
    "Authorizer": "security",
    "BasicAuth": "security",
    "is_loopback": "security",
}


def __getattr__(name: str) -> object:
    """A name of `__all__`, its module imported now (PEP 562)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


__all__ = ["AUTH_ENV", "Authorizer", "BasicAuth", "DashboardApp", "create_app", "is_loopback"]
