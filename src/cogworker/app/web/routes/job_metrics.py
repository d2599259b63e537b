"""Metrics: each job class's runs, failures, time and run-time quantiles over the last
1, 8, 24 or 72 hours, sortable, a page at a time; and a class's charts with its last runs.

The figures are the per-class metrics the settling scripts write
(`adapters.class_metrics`, read through the dashboard's store), merged over
queues, of the `Config.metrics_max_classes` classes that ran last; the path is
not `/metrics`, which is Prometheus's.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web import params
from cogworker.app.web.context import dashboard, query_of, render, threaded
from cogworker.app.web.format import quantile
from cogworker.app.web.name_refs import LONGEST_CLASS_NAME, named
from cogworker.domain.class_metrics import merged, window
from cogworker.domain.class_report import (
    PERIODS,
    QUANTILES,
    SORTS,
    Series,
    class_rows,
    histogram,
    minutes_per_point,
    timeline,
)

PATH = "/job-metrics"
DEFAULT_PERIOD = "1h"
DEFAULT_SORT = "time"
#: Rows a page of the table shows.
PER_PAGE = 50
#: Pages one can ask for (the classes read are capped by `Config.metrics_max_classes`).
MAX_PAGE = 10_000
#: The colour (a CSS variable of app.css) of each dataset of a chart, by its key.
COLOURS = {"runs": "--color-accent", "failures": "--color-danger"}
#: The table's sortable columns: (sort key, heading).
COLUMNS = (
    ("runs", "Runs"),
    ("failures", "Failures"),
    ("time", "Total time"),
    *((key, key) for key in QUANTILES),
)


def _period(request: Request[Any, Any, Any]) -> str:
    return params.choice(query_of(request), "period", PERIODS, DEFAULT_PERIOD)


@get(PATH, name="job-metrics")
@threaded
def job_metrics(request: Request[Any, Any, Any]) -> Template:
    """The table of classes over a period, in the order asked for, a page at a time."""
    query = query_of(request)
    period = _period(request)
    sort = params.choice(query, "sort", SORTS, DEFAULT_SORT)
    page = params.integer(query, "page", 1, MAX_PAGE, 1)
    dash = dashboard(request)
    limit = dash.config.metrics_max_classes
    reading = dash.store.class_metrics.over_hours(dash.store.now(), PERIODS[period], limit)
    rows = class_rows(reading.tallies, sort)
    return render(
        request,
        "job_metrics",
        title="Metrics",
        rows=rows[(page - 1) * PER_PAGE : page * PER_PAGE],
        ran=len(rows),
        page=page,
        has_next=page * PER_PAGE < len(rows),
        first_row=(page - 1) * PER_PAGE + 1,
        left_out=reading.left_out,
        max_classes=limit,
        problems=sorted(reading.problems),
        period=period,
        periods=tuple(PERIODS),
        sort=sort,
        columns=COLUMNS,
        quantiles=tuple(QUANTILES),
    )


@get(f"{PATH}/class", name="job-metrics-class")
@threaded
def job_class(request: Request[Any, Any, Any]) -> Template:
    """One class over a period: its figures, runs and failures over time, its histogram of
    run times, and its last runs."""
    period = _period(request)
    store = dashboard(request).store
    ref = params.text(query_of(request), "name", limit=LONGEST_CLASS_NAME)
    name = named(ref, lambda: _classes(store), LONGEST_CLASS_NAME, "job class with metrics")
    hours = PERIODS[period]
    now = store.now()
    minutes = store.class_metrics.by_minute(name, now, hours) if name else {}
    tally = merged(minutes.values())
    over_time = timeline(minutes, window(now, hours).first_minute, hours)
    step = minutes_per_point(hours)
    return render(
        request,
        "job_metrics_class",
        title=f"Metrics of {name}",
        name=name,
        tally=tally,
        quantiles_shown=[(key, quantile(tally.quantile(q))) for key, q in QUANTILES.items()],
        timeline_step="minute" if step == 1 else f"{step} minutes",
        timeline_chart=chart("line", over_time, {"runs": "Runs", "failures": "Failures"}),
        histogram_chart=chart("bar", histogram(tally), {"runs": "Runs"}),
        runs=store.class_history(name) if name else [],
        period=period,
        periods=tuple(PERIODS),
    )


def _classes(store: DashboardStore) -> set[str]:
    """Every class with metrics, on any queue."""
    return {name for names in store.class_metrics.classes().values() for name in names}


def chart(kind: str, series: Series, labels: dict[str, str]) -> dict[str, Any]:
    """What charts.js draws on a canvas: a Chart.js `kind` of chart of `series`, each
    dataset named by `labels` (its key in the series -> its legend)."""
    return {
        "type": kind,
        "labels": list(series.labels),
        "datasets": [
            {"label": label, "color": COLOURS[key], "data": list(series.values[key])}
            for key, label in labels.items()
        ],
    }
