"""The job page (any jid): where it is, its fields, error, retry timeline; and its history.

A link from a page listing jobs says where the job is, and the page looks
there only; a jid typed in is searched for, within bounds (`app.web.locate`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from litestar import Request, get
from litestar.exceptions import NotFoundException, ValidationException
from litestar.response import Redirect, Response, Template

from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.app.web import notices, params
from cogworker.app.web.cards import is_stale, stale_after
from cogworker.app.web.context import Dashboard, dashboard, query_of, render, threaded
from cogworker.app.web.job_hint import (
    DEEPEST,
    PLACES,
    QUEUE,
    RUNNING,
    Hint,
    InQueue,
    InSet,
    Running,
    described,
    hint_query,
)
from cogworker.app.web.locate import Place, Search, locate, look_at, search
from cogworker.app.web.name_refs import named_queue
from cogworker.app.web.running import Work, work_of
from cogworker.app.web.sets import KINDS
from cogworker.domain.records import AttemptRecord

#: How the retry timeline reads each attempt's outcome (the spec's labels).
OUTCOME_LABELS = {
    "dead": "moved to dead set",
    "killed": "killed by retry_in, moved to dead set",
    "discarded": "discarded by retry_in",
    "cancelled": "cancelled",
    "expired": "expired before it started",
}
#: The class name (without its module) of a failure that was a time limit reached.
TIMEOUT_ERROR = "JobTimeoutError"
#: Outcome labels an attempt record may carry for a time limit reached.
TIMED_OUT = frozenset({"timed_out", "timed out", "timeout"})
#: Tracked statuses that end a job without a run to show: status -> (tag, what happened).
ENDINGS = {
    "complete": ("Complete", "It ran to completion: it isn't waiting anywhere."),
    "discarded": ("Discarded", "It failed and was discarded: it won't be retried."),
    "cancelled": ("Cancelled", "It was cancelled: it won't run or be retried."),
    "expired": ("Expired", "It expired before it started: it was dropped, never run."),
}
#: Where a job can still be cancelled (waiting, or running).
CANCELLABLE = frozenset({"Running", "Enqueued", "Scheduled", "Retrying"})
#: Attempts shown on the page; the History page has every run.
ATTEMPTS_SHOWN = 5
TAG_CLASSES = {
    "Enqueued": "tag-neutral",
    "Running": "tag-accent",
    "Scheduled": "tag-accent-2",
    "Retrying": "tag-warning",
    "Dead": "tag-danger",
}


def hint_of(query: Mapping[str, Sequence[str]], queues: QueueStore) -> Hint | None:
    """The place a job page's query names (None: none, search for the job); a bad one is a
    400 naming the parameter."""
    where = params.choice(query, "in", PLACES, "")
    if not where:
        return None
    if where == RUNNING:
        return Running()
    if where == QUEUE:
        queue = named_queue(queues, params.text(query, "queue", limit=500))
        return InQueue(queue=queue, index=params.integer(query, "at", 0, DEEPEST, 0))
    cursor = params.cursor(query, "at")
    if cursor is None:
        raise ValidationException(f"query parameter 'at': needed with in={where}")
    return InSet(slug=where, cursor=cursor)


@get("/job", name="job")
@threaded
def job(request: Request[Any, Any, Any]) -> Template | Redirect:
    """Everything known about one jid: where a link says it is (`app.web.job_hint`), or
    searched for, then shown where it was found (so that polls look there only)."""
    query = query_of(request)
    jid = params.jid(query, "jid")
    if not jid:
        return render(request, "job_missing", title="Go to a job", jid="")
    dash = dashboard(request)
    hint = hint_of(query, dash.store.queues)
    if hint is not None:
        return _page(request, dash, jid, look_at(dash.store, jid, hint), moved=hint)
    searched = search(dash.store, jid)
    if searched.place is None:
        return _page(request, dash, jid, None, searched=searched)
    kept = {name: values[0] for name, values in query.items() if name in notices.KEYS}
    found = {"jid": jid, **hint_query(searched.place.hint), **kept}
    return Redirect(path=dash.url("/job", found), status_code=303)


def _page(
    request: Request[Any, Any, Any],
    dash: Dashboard,
    jid: str,
    place: Place | None,
    *,
    moved: Hint | None = None,
    searched: Search | None = None,
) -> Template:
    """The job page: live where a link said the job is; not live after a search that found
    nothing (a poll would search again)."""
    store = dash.store
    records = store.job_page(jid)
    attempts, status = records.attempts, records.status
    now = store.now()
    return render(
        request,
        "job" if searched is None else "job_searched",
        live=searched is None,
        title=f"Job {jid}",
        jid=jid,
        place=place,
        place_query=hint_query(place.hint) if place else {},
        moved=described(moved) if moved and place is None else "",
        searched=searched,
        kind=KINDS.get(place.slug) if place else None,
        tag_class=TAG_CLASSES.get(place.tag, "tag-neutral") if place else "",
        status=status,
        ending=ENDINGS.get(status or ""),
        cancellable=place is not None and place.tag in CANCELLABLE,
        work=_work(dash, place, now) if place and place.tag == "Running" else None,
        timeline=[(attempt, attempt_label(attempt)) for attempt in attempts[:ATTEMPTS_SHOWN]],
        more_attempts=max(0, len(attempts) - ATTEMPTS_SHOWN),
        now=now,
        result=records.result,
    )


def attempt_label(attempt: AttemptRecord) -> str:
    """How the timeline reads a failed attempt: its outcome, and "timed out" when the failure
    was its time limit (by the outcome the record names, or by the error's class)."""
    label = OUTCOME_LABELS.get(attempt.outcome, "failed")
    timed_out = attempt.outcome in TIMED_OUT
    if not timed_out and attempt.error_class.rpartition(".")[2] != TIMEOUT_ERROR:
        return label
    return "timed out" if timed_out or label == "failed" else f"timed out, {label}"


def _work(dash: Dashboard, place: Place, now: float) -> Work:
    """The running job's elapsed time, limit, and whether its process still answers."""
    processes = dash.store.processes
    fields = next((p.fields for p in processes.infos() if p.identity == place.where), {})
    gone = is_stale(fields, now, stale_after(dash.config.heartbeat_interval))
    record = json.loads(place.view.raw)  # written by locate from the heartbeat's dict
    return work_of(place.where, "", record, now, unresponsive=gone)


@get("/history", name="history")
@threaded
def history(request: Request[Any, Any, Any]) -> Template:
    """Every recorded run of one jid, newest first."""
    jid = params.jid(query_of(request), "jid")
    store = dashboard(request).store
    runs = store.history(jid) if jid else []
    return render(request, "history", title=f"History of {jid}", jid=jid, runs=runs)


@get("/job/raw", name="job-raw")
@threaded
def raw(request: Request[Any, Any, Any]) -> Response[bytes]:
    """A job's entry as stored, in full: shown as text, or downloaded (`download=1`)."""
    query = query_of(request)
    jid = params.jid(query, "jid")
    store = dashboard(request).store
    hint = hint_of(query, store.queues)
    place = None if not jid else look_at(store, jid, hint) if hint else locate(store, jid)
    if place is None:
        raise NotFoundException(f"No entry for the jid {jid!r} in the places searched.")
    headers = {}
    if params.integer(query, "download", 0, 1, 0):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", jid)[:100]
        headers["content-disposition"] = f'attachment; filename="job-{name}.json"'
    # Plain text, never sniffed (the security headers say nosniff): job data is not a page.
    return Response(place.view.raw, media_type="text/plain", headers=headers)
