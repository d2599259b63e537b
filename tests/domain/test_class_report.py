"""The Metrics page's figures: rows sorted, the time chart's points, the histogram's bars."""

from __future__ import annotations

from cogworker.domain.class_metrics import BOUNDS, RunSample, Tally
from cogworker.domain.class_report import (
    PERIODS,
    SORTS,
    bucket_label,
    class_rows,
    histogram,
    minutes_per_point,
    timeline,
)


def _tally(*micros: int, failed: int = 0) -> Tally:
    return Tally.of(
        RunSample(micros=duration, failed=index < failed) for index, duration in enumerate(micros)
    )


def test_rows_leave_out_classes_without_runs_and_break_ties_by_name() -> None:
    """Every sort puts the largest first; equal values keep the names' order."""
    tallies = {"b": _tally(5_000), "a": _tally(5_000), "c": _tally(1_000, 1_000), "z": Tally()}
    assert [row.name for row in class_rows(tallies, "runs")] == ["c", "a", "b"]
    assert [row.name for row in class_rows(tallies, "p99")] == ["a", "b", "c"]
    assert set(SORTS) == {"time", "runs", "failures", "p50", "p95", "p99"}


def test_the_timeline_adds_minutes_into_its_points() -> None:
    """Each period gets 60 to 96 points; a minute counts in its point, none outside."""
    for hours in PERIODS.values():
        assert 60 <= hours * 60 // minutes_per_point(hours) <= 96
    first_hour = 480_016  # 2024-10-04 16:00 UTC
    start = first_hour * 60
    minutes = {start: _tally(1, 2, failed=1), start + 7: _tally(3), start + 8 * 60: _tally(4)}
    series = timeline(minutes, start, 8)
    assert len(series.labels) == 96
    assert series.labels[:2] == ("16:00", "16:05")
    assert series.values["runs"][:2] == (2, 1)
    assert series.values["failures"][:2] == (1, 0)
    assert sum(series.values["runs"]) == 3  # the minute after the period is left out


def test_the_histogram_spans_the_buckets_with_runs() -> None:
    """From the shortest bucket with runs to the longest, empty ones between kept."""
    bars = histogram(_tally(2_000, 2_000, 9_000))
    assert bars.labels == ("≤ 2.5 ms", "≤ 4 ms", "≤ 6 ms", "≤ 10 ms")
    assert bars.values["runs"] == (2, 0, 0, 1)
    assert bucket_label(len(BOUNDS)) == "> 600 s"
    assert len(histogram(Tally()).labels) == len(BOUNDS) + 1
