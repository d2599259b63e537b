"""The dashboard's check of the key layout, before every page: it reads keys where this
code's layout puts them, so on a Redis of another layout it would misread them (an empty
Periodic page over an unmigrated schedule, say).  Workers exit 2 there and clients raise
`LayoutError`; the dashboard answers every page with a 503 naming the cure instead.

Read only: a fresh Redis (no number, no old keys) passes, and is left for the first
worker or client to number.  A layout found right is trusted for `RECHECK_SECONDS`, so
polls don't pay a round trip each; a wrong one is read again at each request, so the
pages come back as soon as `cogworker migrate` has run.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
from litestar import Request
from litestar.response import Template

from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web.context import render, threaded
from cogworker.domain.layout_verdicts import refusal

#: How long a layout found right is trusted before it is read again.
RECHECK_SECONDS = 30.0
#: Where the app's state keeps its gate.
STATE_KEY = "cogworker_layout_gate"


class LayoutMismatchError(Exception):
    """Redis holds another key layout than this code's (the message says which, and the
    cure)."""


@attrs.define
class LayoutGate:
    """Whether the dashboard may read this Redis's keys."""

    store: DashboardStore
    _trusted_until: float = float("-inf")

    def check(self) -> None:
        """Raise LayoutMismatchError if Redis holds another layout than this code's."""
        if time.monotonic() < self._trusted_until:
            return
        problem = refusal(self.store.layout())
        if problem is not None:
            raise LayoutMismatchError(problem)
        self._trusted_until = time.monotonic() + RECHECK_SECONDS


async def check_layout(request: Request[Any, Any, Any]) -> None:
    """Before each page: stop it (LayoutMismatchError) on a Redis of another layout."""
    gate: LayoutGate = request.app.state[STATE_KEY]
    await threaded(gate.check)()


def layout_mismatch(request: Request[Any, Any, Any], error: LayoutMismatchError) -> Template:
    """The page shown instead of any other while the layout isn't this code's."""
    return render(
        request, "error", title="Another key layout", status_code=503,
        message=f"The dashboard can't show this Redis: {error}. Its pages come back once "
        "the layout is this code's.",
    )  # fmt: skip
