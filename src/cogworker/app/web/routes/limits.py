"""Limits: each per-key limit's key used lately (`adapters.limit_store`), with its holders,
its use against its max, and the jobs it refused lately that haven't run since."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from cogworker.app.web.context import dashboard, render, threaded


@get("/limits", name="limits")
@threaded
def limits(request: Request[Any, Any, Any]) -> Template:
    """The Limits page (its live part when polled)."""
    store = dashboard(request).store
    return render(
        request, "limits", live=True, title="Limits", uses=store.limits.uses(), now=store.now()
    )
