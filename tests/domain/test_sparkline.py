"""Properties of the sparkline geometry: the value range, the segments and their SVG points."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.sparkline import (
    MIN_PAD,
    Segment,
    Summary,
    segments,
    summary,
    value_range,
)
from tests.domain.strategies import kibs, spark_values

#: One "x,y" pair as the polyline writes it (the `%.2f` format).
PAIR = r"\d+\.\d{2},\d+\.\d{2}"


def runs_of(values: Sequence[int | None]) -> list[range]:
    """The slot indexes of each run of consecutive non-None values, left to right."""
    found: list[range] = []
    start: int | None = None
    for index, value in enumerate([*values, None]):
        if value is not None and start is None:
            start = index
        elif value is None and start is not None:
            found.append(range(start, index))
            start = None
    return found


@given(st.lists(st.none(), max_size=10))
def test_no_value_spans_0_to_1(values: list[None]) -> None:
    """With no sample at all the range is the spec's 0-1 and nothing is drawn."""
    assert value_range(values) == (0.0, 1.0)
    assert segments(values) == ()
    assert summary(values) is None


@given(spark_values.filter(lambda values: any(value is not None for value in values)))
def test_the_range_holds_the_values_with_headroom(values: list[int | None]) -> None:
    """low <= min < max < high, low never below 0, and at least 1 MiB of pad unless clamped."""
    present = [value for value in values if value is not None]
    low, high = value_range(values)
    assert 0 <= low <= min(present)
    assert high >= max(present) + MIN_PAD
    assert low == 0 or low <= min(present) - MIN_PAD


@given(st.lists(kibs, min_size=2))
def test_a_wide_series_gets_ten_percent(values: list[int]) -> None:
    """When the spread is over 10 MiB the pad is 10 % of it (low clamped at 0)."""
    spread = max(values) - min(values)
    low, high = value_range(values)
    if spread * 0.1 > MIN_PAD:
        assert high == pytest.approx(max(values) + spread * 0.1)
        assert low == pytest.approx(max(min(values) - spread * 0.1, 0))


@given(spark_values)
def test_every_point_is_inside_the_box(values: list[int | None]) -> None:
    """No point of any segment leaves the 0-100 viewBox."""
    for segment in segments(values):
        for x, y in segment.points:
            assert 0 <= x <= 100
            assert 0 <= y <= 100


@given(spark_values)
def test_one_segment_per_run(values: list[int | None]) -> None:
    """There are exactly as many segments as runs of consecutive samples."""
    assert len(segments(values)) == len(runs_of(values))


@given(spark_values)
def test_runs_never_cross_a_gap(values: list[int | None]) -> None:
    """Each segment lies within its own run's slots: no line spans a slot without a sample."""
    width = 100 / len(values)
    for segment, run in zip(segments(values), runs_of(values), strict=True):
        xs = [x for x, _ in segment.points]
        assert xs == sorted(xs)
        assert run.start * width - 1e-9 <= xs[0]
        assert xs[-1] <= run.stop * width + 1e-9


@given(spark_values)
def test_each_point_sits_at_its_slots_centre(values: list[int | None]) -> None:
    """A run of several samples has a point per sample, at x = (i + 0.5) * 100 / n."""
    width = 100 / len(values)
    for segment, run in zip(segments(values), runs_of(values), strict=True):
        if len(run) > 1:
            xs = [x for x, _ in segment.points]
            assert xs == pytest.approx([(index + 0.5) * width for index in run])


@given(spark_values)
def test_a_lone_sample_strokes_across_its_slot(values: list[int | None]) -> None:
    """A run of one is a flat stroke from its slot's left edge to its right edge."""
    width = 100 / len(values)
    for segment, run in zip(segments(values), runs_of(values), strict=True):
        if len(run) == 1:
            (x0, y0), (x1, y1) = segment.points
            assert (x0, x1) == pytest.approx((run.start * width, run.stop * width))
            assert y0 == y1


@given(st.integers(min_value=MIN_PAD, max_value=2**40), st.integers(1, 200), st.data())
def test_a_flat_series_is_drawn_mid_box(value: int, size: int, data: st.DataObject) -> None:
    """The same value in every sample (1 MiB or more) is a line at y = 50."""
    values = data.draw(st.lists(st.sampled_from([value, None]), min_size=size, max_size=size))
    for segment in segments(values):
        assert all(y == 50 for _, y in segment.points)


@given(spark_values)
def test_higher_values_are_drawn_higher(values: list[int | None]) -> None:
    """Within a run, a bigger value never gets a bigger y (SVG's y points down)."""
    for segment, run in zip(segments(values), runs_of(values), strict=True):
        if len(run) > 1:
            samples = [value for value in values[run.start : run.stop] if value is not None]
            ys = [y for _, y in segment.points]
            by_value = sorted(zip(samples, ys, strict=True))
            assert all(a[1] >= b[1] for a, b in itertools.pairwise(by_value) if a[0] < b[0])


@given(spark_values)
def test_polyline_and_polygon_use_two_decimals(values: list[int | None]) -> None:
    """The line is "x,y ..." with 2 decimals; the fill closes it down to y = 100 at both ends."""
    for segment in segments(values):
        assert re.fullmatch(f"{PAIR}( {PAIR})*", segment.polyline)
        first, last = segment.points[0][0], segment.points[-1][0]
        assert segment.polygon == f"{first:.2f},100 {segment.polyline} {last:.2f},100"


def test_the_spec_drawing() -> None:
    """A run of two and a lone last sample are drawn as the spec's workers.rb draws them."""
    drawn = segments([None, 2048, 4096, None, 3072])
    assert value_range([None, 2048, 4096, None, 3072]) == (1024.0, 5120.0)
    assert [(s.polyline, s.polygon) for s in drawn] == [
        ("30.00,75.00 50.00,25.00", "30.00,100 30.00,75.00 50.00,25.00 50.00,100"),
        ("80.00,50.00 100.00,50.00", "80.00,100 80.00,50.00 100.00,50.00 100.00,100"),
    ]


def test_a_small_flat_series_sits_on_the_floor() -> None:
    """Below 1 MiB the band is clamped at 0, so a flat zero is drawn at the bottom."""
    assert value_range([0, 0]) == (0.0, 1024.0)
    assert segments([0, 0]) == (Segment(points=((25.0, 100.0), (75.0, 100.0))),)


@given(spark_values)
def test_the_summary_is_min_max_and_latest(values: list[int | None]) -> None:
    """The text alternative gives the lowest, the highest and the last sample."""
    present = [value for value in values if value is not None]
    expected = Summary(min=min(present), max=max(present), now=present[-1]) if present else None
    assert summary(values) == expected
