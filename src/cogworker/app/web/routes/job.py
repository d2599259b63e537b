"""The job page (any jid): where it is, its fields, error, retry timeline; and its history."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from cogworker.app.web import params
from cogworker.app.web.context import dashboard, query_of, render, threaded
from cogworker.app.web.locate import locate
from cogworker.app.web.sets import KINDS

#: How the retry timeline reads each attempt's outcome (the spec's labels).
OUTCOME_LABELS = {
    "dead": "moved to dead set",
    "killed": "killed by retry_in, moved to dead set",
    "discarded": "discarded by retry_in",
    "cancelled": "cancelled",
    "expired": "expired before it started",
}
#: Attempts shown on the page; the History page has every run.
ATTEMPTS_SHOWN = 5
TAG_CLASSES = {
    "Enqueued": "tag-neutral",
    "Running": "tag-accent",
    "Scheduled": "tag-accent-2",
    "Retrying": "tag-warning",
    "Dead": "tag-danger",
}


@get("/job", name="job")
@threaded
def job(request: Request[Any, Any, Any]) -> Template:
    """Everything known about one jid."""
    jid = params.text(query_of(request), "jid")
    if not jid:
        return render(request, "job_missing", title="Go to a job", jid="")
    store = dashboard(request).store
    place = locate(store, jid)
    attempts = store.attempts(jid)
    return render(
        request,
        "job",
        live=True,
        title=f"Job {jid}",
        jid=jid,
        place=place,
        kind=KINDS.get(place.slug) if place else None,
        tag_class=TAG_CLASSES.get(place.tag, "tag-neutral") if place else "",
        status=store.status(jid),
        timeline=attempts[:ATTEMPTS_SHOWN],
        outcome_labels=OUTCOME_LABELS,
        more_attempts=max(0, len(attempts) - ATTEMPTS_SHOWN),
        now=store.now(),
    )


@get("/history", name="history")
@threaded
def history(request: Request[Any, Any, Any]) -> Template:
    """Every recorded run of one jid, newest first."""
    jid = params.text(query_of(request), "jid")
    store = dashboard(request).store
    runs = store.history(jid) if jid else []
    return render(request, "history", title=f"History of {jid}", jid=jid, runs=runs)
