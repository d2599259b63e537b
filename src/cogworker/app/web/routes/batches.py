"""Batches: the newest batches with their members' progress and their callbacks.

What `Client.batch_status` reads, for each batch still held (a finished batch's
keys expire a day after it finished, an unfinished one's 30 days after its
last news: `adapters/batch_store.py`).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from cogworker.app.web.context import dashboard, render, threaded
from cogworker.domain.batches import status_word

#: Batches listed, newest first.
SHOWN = 100


@get("/batches", name="batches")
@threaded
def batches(request: Request[Any, Any, Any]) -> Template:
    """The Batches page (its live part when polled)."""
    store = dashboard(request).store
    listed = store.batches.listed(SHOWN)
    rows = [(status, status_word(status)) for status in listed]
    return render(request, "batches", live=True, title="Batches", rows=rows, now=store.now())
