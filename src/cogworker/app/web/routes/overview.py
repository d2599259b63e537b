"""Overview: the stat cards, runs per day, the Redis grid and the Cogworker section;
plus the JSON stats and the health check."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Response, Template

from cogworker.adapters.codec import unstructured_in_full
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web import about, params
from cogworker.app.web.context import VERSION, dashboard, query_of, render, threaded
from cogworker.domain.stats import PERIODS, days_back, runs_per_day

#: The chart's default period (the first offered).
DEFAULT_PERIOD = next(iter(PERIODS))
ABOUT = about.cogworker_section(VERSION)
#: Queues Overview lists (the largest); the Queues page has them all.
OVERVIEW_QUEUES = 10


def _chart(store: DashboardStore, now: float, days: int) -> tuple[dict[str, list[Any]], list[str]]:
    """The chart's series, and a sentence for each day's counter that isn't a count (left
    out of the chart)."""
    per_day = store.daily_counts(("processed", "failed"), now, days)
    counted = {
        name: {day: n for day, n in values.items() if n is not None}
        for name, values in per_day.items()
    }
    runs = runs_per_day(counted["processed"], counted["failed"], days_back(now, days))
    chart: dict[str, list[Any]] = {
        "labels": [run.day for run in runs],
        "succeeded": [run.succeeded for run in runs],
        "failed": [run.failed for run in runs],
    }
    unreadable = [
        f"the {name} counter of {day} is not a count (left out of the chart)"
        for name, values in per_day.items()
        for day, n in values.items()
        if n is None
    ]
    return chart, unreadable


@get("/", name="overview")
@threaded
def overview(request: Request[Any, Any, Any]) -> Template:
    """The Overview page (its live part when polled)."""
    period = params.choice(query_of(request), "period", PERIODS, DEFAULT_PERIOD)
    store = dashboard(request).store
    now = store.now()
    counts = store.counts()
    chart, unreadable = _chart(store, now, PERIODS[period])
    loads = store.queues.loads(now)
    # A paused queue is listed however small: a pause left on by mistake stops its jobs.
    busiest = sorted(loads, key=lambda load: (not load.paused, -(load.size or 0)))
    busiest = busiest[:OVERVIEW_QUEUES]
    return render(
        request,
        "overview",
        live=True,
        title="Overview",
        counts=counts,
        problems=[*counts.problems, *unreadable],
        redis_info=about.redis_section(store.redis_info()),
        chart=chart,
        busiest=busiest,
        more_queues=len(loads) - len(busiest),
        period=period,
        periods=tuple(PERIODS),
    )


@get("/api/stats", name="api-stats")
@threaded
def stats(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """The stat cards' numbers and every queue's size and latency, as JSON: every queue with
    the same keys (zeros where nothing ran, `problem` null when it has none)."""
    store = dashboard(request).store
    loads = store.queues.loads(store.now())
    return {
        "stats": unstructured_in_full(store.counts()),
        "queues": unstructured_in_full(loads),
    }


@get("/health", name="health")
@threaded
def health(request: Request[Any, Any, Any]) -> Response[dict[str, str]]:
    """200 when Redis answers, 503 when it doesn't (no details either way)."""
    if not dashboard(request).store.answers():
        return Response({"status": "redis unavailable"}, status_code=503)
    return Response({"status": "ok"})


@get("/about", name="about")
@threaded
def about_page(request: Request[Any, Any, Any]) -> Template:
    """What this dashboard runs on: cogworker and its libraries, and the Redis server."""
    info = dashboard(request).store.redis_info()
    return render(
        request,
        "about",
        title="About",
        about=ABOUT,
        server=about.redis_section(info, about.SERVER_FIELDS),
    )
