"""The dashboard: `create_app(config)` is an ASGI app; `cogworker serve` runs it.

::

    from litestar import Litestar, asgi
    from cogworker.app.web import create_app

    dashboard = create_app(config, auth="admin:secret", root_path="/jobs")
    app = Litestar(route_handlers=[asgi("/jobs", is_mount=True, copy_scope=True)(dashboard)])
"""

from cogworker.app.web.app import create_app
from cogworker.app.web.asgi import DashboardApp
from cogworker.app.web.security import AUTH_ENV, Authorizer, BasicAuth, is_loopback

__all__ = ["AUTH_ENV", "Authorizer", "BasicAuth", "DashboardApp", "create_app", "is_loopback"]
