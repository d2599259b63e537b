"""Sparkline geometry: the lines and fills of a series drawn in an SVG `viewBox="0 0 100 100"`.

As the spec's Workers page draws a process's memory history: the full
width always spans every slot, one x position per slot, so the chart reads
as "the last 24 hours" whatever data exists.  A slot without a sample
breaks the line; each run of consecutive samples is one line and fill,
each point at its slot's centre; a lone sample is drawn as a short stroke
across its own slot so it stays visible.  The value range has some
headroom (10 %, at least 1 MiB) clamped at 0, so the line never hugs the
edges and a flat series sits in a band around its value.

y grows downwards in SVG: a high value has a small y.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs

#: The least headroom above and below the values, in KiB (1 MiB).
MIN_PAD = 1024
#: The headroom as a share of the values' spread, when that is more.
PAD_SHARE = 0.1
#: The viewBox's width and height.
BOX = 100.0

Point = tuple[float, float]


@attrs.frozen(kw_only=True)
class Segment:
    """One run of consecutive samples: its points, left to right."""

    points: tuple[Point, ...]

    @property
    def polyline(self) -> str:
        """The line's `points` attribute: "x,y x,y ..." with 2 decimals."""
        return " ".join(_coordinates(x, y) for x, y in self.points)

    @property
    def polygon(self) -> str:
        """The fill's `points` attribute: the line closed down to the bottom edge."""
        first, last = self.points[0][0], self.points[-1][0]
        return f"{first:.2f},100 {self.polyline} {last:.2f},100"


@attrs.frozen(kw_only=True)
class Summary:
    """The text alternative to a sparkline: lowest, highest and latest value (KiB)."""

    min: int
    max: int
    now: int


def value_range(values: Sequence[int | None]) -> tuple[float, float]:
    """The (low, high) the box's height spans: the values with headroom, never below 0.

    No value at all gives (0.0, 1.0).
    """
    present = [value for value in values if value is not None]
    if not present:
        return 0.0, 1.0
    low, high = float(min(present)), float(max(present))
    pad = max((high - low) * PAD_SHARE, MIN_PAD)
    return max(low - pad, 0.0), high + pad


def segments(values: Sequence[int | None]) -> tuple[Segment, ...]:
    """One segment per run of consecutive non-None values, left to right."""
    low, high = value_range(values)
    count = len(values)
    return tuple(Segment(points=_points(run, count, low, high)) for run in _runs(values))


def summary(values: Sequence[int | None]) -> Summary | None:
    """Lowest, highest and latest of the values, or None when there is none."""
    present = [value for value in values if value is not None]
    if not present:
        return None
    return Summary(min=min(present), max=max(present), now=present[-1])


def _runs(values: Sequence[int | None]) -> Iterator[list[tuple[int, int]]]:
    """Each run of consecutive non-None values, as (slot index, value) pairs."""
    run: list[tuple[int, int]] = []
    for index, value in enumerate(values):
        if value is not None:
            run.append((index, value))
        elif run:
            yield run
            run = []
    if run:
        yield run


def _points(run: list[tuple[int, int]], count: int, low: float, high: float) -> tuple[Point, ...]:
    if len(run) == 1:
        index, value = run[0]
        y = _y(value, low, high)
        # Computed from the slot's edges, not centre +- half a slot: the last
        # slot's right edge is then exactly 100, never a rounding above it.
        return (index * BOX / count, y), ((index + 1) * BOX / count, y)
    return tuple(((index + 0.5) * BOX / count, _y(value, low, high)) for index, value in run)


def _y(value: int, low: float, high: float) -> float:
    # (high - v) / (high - low) rather than 1 - (v - low) / (high - low): the
    # same number, but it can't leave [0, 1] by a rounding.
    return (high - value) / (high - low) * BOX


def _coordinates(x: float, y: float) -> str:
    return f"{x:.2f},{y:.2f}"
