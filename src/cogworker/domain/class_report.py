"""The Metrics page's figures: each class's row over a period, sorted, and a class's charts
(runs and failures over time, its histogram of run times), from per-class tallies.

Pure functions of tallies (`domain.class_metrics`); the page reads them through
the dashboard's store.  Times on the charts are UTC.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping

import attrs

from cogworker.domain.class_metrics import BOUNDS, NO_RUNS, Tally

#: The periods offered, by their key in the URL: hours back from now (`class_metrics.window`).
PERIODS: Mapping[str, int] = {"1h": 1, "8h": 8, "24h": 24, "72h": 72}
#: Minutes per point of a class's time chart, by period hours: about 60 to 100 points.
_MINUTES_PER_POINT = {1: 1, 8: 5, 24: 15, 72: 60}
#: The quantiles of a row, by their column key.
QUANTILES: Mapping[str, float] = {"p50": 0.5, "p95": 0.95, "p99": 0.99}


@attrs.frozen
class ClassRow:
    """One class's figures over a period."""

    name: str
    tally: Tally

    @property
    def runs(self) -> int:
        return self.tally.runs

    @property
    def failures(self) -> int:
        return self.tally.failures

    @property
    def seconds(self) -> float:
        """Execution time of all the runs."""
        return self.tally.seconds

    def quantile(self, key: str) -> float | None:
        """The quantile of `QUANTILES` named `key`, seconds (None: no runs)."""
        return self.tally.quantile(QUANTILES[key])


def _descending_quantile(key: str) -> Callable[[ClassRow], float]:
    def value(row: ClassRow) -> float:
        found = row.quantile(key)
        return -1.0 if found is None else found

    return value


#: The orders of the table, by their key in the URL: each the largest first.
SORTS: Mapping[str, Callable[[ClassRow], float]] = {
    "time": lambda row: row.seconds,
    "runs": lambda row: row.runs,
    "failures": lambda row: row.failures,
    **{key: _descending_quantile(key) for key in QUANTILES},
}


def class_rows(tallies: Mapping[str, Tally], sort: str) -> list[ClassRow]:
    """A row per class that ran, ordered by `sort` (a key of `SORTS`), largest first; ties
    by name."""
    rows = [ClassRow(name, tally) for name, tally in tallies.items() if tally.runs]
    rows.sort(key=lambda row: row.name)
    rows.sort(key=SORTS[sort], reverse=True)  # stable: ties keep the names' order
    return rows


@attrs.frozen(kw_only=True)
class Series:
    """A chart's data: labels, and one list of values per dataset (same length)."""

    labels: tuple[str, ...]
    values: Mapping[str, tuple[float, ...]]


def minutes_per_point(hours: int) -> int:
    """The minutes each point of a class's time chart over `hours` hours adds up."""
    return _MINUTES_PER_POINT.get(hours, max(1, hours * 60 // 96))


def timeline(minutes: Mapping[int, Tally], start: int, hours: int) -> Series:
    """Runs and failures per point (`minutes_per_point`) from the minute `start` (since the
    epoch) for `hours` hours, from tallies by minute since the epoch."""
    step = minutes_per_point(hours)
    points = [NO_RUNS] * (hours * 60 // step)
    for minute, tally in minutes.items():
        index = (minute - start) // step
        if 0 <= index < len(points):
            points[index] = points[index].plus(tally)
    shape = "%H:%M" if hours <= 24 else "%a %H:%M"
    labels = tuple(_clock(start + index * step, shape) for index in range(len(points)))
    return Series(
        labels=labels,
        values={
            "runs": tuple(point.runs for point in points),
            "failures": tuple(point.failures for point in points),
        },
    )


def _clock(minute: int, shape: str) -> str:
    return datetime.datetime.fromtimestamp(minute * 60, datetime.UTC).strftime(shape)


def histogram(tally: Tally) -> Series:
    """Runs per bucket of run time, from the shortest bucket with runs to the longest
    (all of them empty when there are none)."""
    used = [index for index, count in enumerate(tally.counts) if count]
    low, high = (used[0], used[-1]) if used else (0, len(tally.counts) - 1)
    labels = tuple(bucket_label(index) for index in range(low, high + 1))
    return Series(labels=labels, values={"runs": tuple(tally.counts[low : high + 1])})


def bucket_label(bucket: int) -> str:
    """A histogram bucket as its bound: `≤ 2.5 ms`, `≤ 4 s`, and `> 600 s` for the last."""
    if bucket == len(BOUNDS):
        return f"> {_duration(BOUNDS[-1])}"
    return f"≤ {_duration(BOUNDS[bucket])}"


def _duration(micros: int) -> str:
    if micros < 1_000_000:
        return f"{micros / 1_000:g} ms"
    return f"{micros / 1_000_000:g} s"
