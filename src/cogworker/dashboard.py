"""The dashboard as an ASGI app, to mount in your own (`cogworker serve` runs it on its own).

::

    from litestar import Litestar, asgi
    from cogworker.dashboard import create_app

    dashboard = create_app(config, auth="admin:a-long-secret", root_path="/jobs")
    app = Litestar(route_handlers=[asgi("/jobs", is_mount=True, copy_scope=True)(dashboard)])
"""

from cogworker.app.web import Authorizer, BasicAuth, DashboardApp, create_app

__all__ = ["Authorizer", "BasicAuth", "DashboardApp", "create_app"]
