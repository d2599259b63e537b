"""Per-class metrics: what one run adds, how tallies merge, and what they tell.

A `Tally` counts one job class's runs, failures and execution time over a
stretch of time (a minute, an hour, since the class first ran), with a
histogram of run times in log-spaced buckets, the shape Sidekiq 7 uses.
Times are whole microseconds, so tallies add up exactly in any order: a
class's hour is the sum of its minutes, and its figures over several queues
the sum of each queue's.  Minutes and hours are counted from the Unix epoch
(UTC), so every process and reader cuts time alike.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping

import attrs

#: Each bucket's upper bound ("less or equal"), microseconds: 1, 1.5, 2.5, 4 and 6 times
#: each power of ten from 1 ms to 10 minutes, about 1.5 times apart.  A last bucket
#: (no bound, Prometheus's `+Inf`) takes the longer runs.
BOUNDS: tuple[int, ...] = tuple(
    int(step * 10**power) for power in range(3, 9) for step in (1, 1.5, 2.5, 4, 6)
)
BUCKETS = len(BOUNDS) + 1
#: The first bound, seconds: the histogram can't tell runs shorter than it apart, so a
#: quantile estimated at or below it only says the runs took less (its figure is the
#: interpolation's, not the runs').
RESOLUTION = BOUNDS[0] / 1_000_000
_NO_RUNS = (0,) * BUCKETS


def bucket_of(micros: int) -> int:
    """The bucket a run of `micros` microseconds counts in (its index)."""
    return bisect.bisect_left(BOUNDS, micros)


def lower_bound(bucket: int) -> int:
    """The time every run of `bucket` took more than (0 for the first)."""
    return 0 if bucket == 0 else BOUNDS[bucket - 1]


@attrs.frozen(kw_only=True)
class RunSample:
    """What one run adds to its class's figures on the queue it ran from (a class's
    figures are kept per queue and merged on reading)."""

    queue: str = ""
    micros: int
    failed: bool

    @classmethod
    def of(cls, queue: str, duration: float, *, failed: bool) -> RunSample:
        """A run from `queue` that took `duration` seconds (a clock that stepped back
        counts as 0)."""
        micros = round(duration * 1_000_000) if math.isfinite(duration) else 0
        return cls(queue=queue, micros=max(micros, 0), failed=failed)

    @property
    def bucket(self) -> int:
        """The histogram bucket it counts in."""
        return bucket_of(self.micros)


def _bucket_counts(_: object, attribute: object, counts: tuple[int, ...]) -> None:
    if len(counts) != BUCKETS:
        raise ValueError(f"a tally has {BUCKETS} bucket counts, not {len(counts)}")


@attrs.frozen(kw_only=True)
class Tally:
    """A class's runs over some time: how many, how many failed, how long they took."""

    runs: int = 0
    failures: int = 0
    #: Execution time of all the runs, microseconds.
    micros: int = 0
    #: Runs per bucket of `BOUNDS` (the last: longer than the last bound).
    counts: tuple[int, ...] = attrs.field(default=_NO_RUNS, validator=_bucket_counts)

    @classmethod
    def of(cls, samples: Iterable[RunSample]) -> Tally:
        """The tally of `samples`."""
        counts = [0] * BUCKETS
        runs = failures = micros = 0
        for sample in samples:
            runs += 1
            failures += sample.failed
            micros += sample.micros
            counts[sample.bucket] += 1
        return cls(runs=runs, failures=failures, micros=micros, counts=tuple(counts))

    def plus(self, other: Tally) -> Tally:
        """This tally and `other` together."""
        return Tally(
            runs=self.runs + other.runs,
            failures=self.failures + other.failures,
            micros=self.micros + other.micros,
            counts=tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)),
        )

    @property
    def seconds(self) -> float:
        """Execution time of all the runs, seconds."""
        return self.micros / 1_000_000

    def cumulative(self) -> tuple[int, ...]:
        """Runs that took at most each bound, then all runs (Prometheus's `le` counts)."""
        total, counts = 0, []
        for count in self.counts:
            total += count
            counts.append(total)
        return tuple(counts)

    def quantile(self, q: float) -> float | None:
        """The run time (seconds) `q` of the runs took at most, estimated from the buckets
        as Prometheus's `histogram_quantile` does (linear within a bucket); None: no runs.

        A quantile falling in the last bucket is the last bound (nothing is known above).
        """
        if not 0 <= q <= 1:
            raise ValueError(f"a quantile is in [0, 1], not {q!r}")
        counted = sum(self.counts)
        if counted == 0:
            return None
        rank, below = q * counted, 0
        bucket = 0
        # The first bucket whose runs reach the rank (a q of 1 stops at the last counted).
        while self.counts[bucket] == 0 or below + self.counts[bucket] < rank:
            below += self.counts[bucket]
            bucket += 1
        if bucket == len(BOUNDS):
            return BOUNDS[-1] / 1_000_000
        low, high = lower_bound(bucket), BOUNDS[bucket]
        return (low + (high - low) * (rank - below) / self.counts[bucket]) / 1_000_000


NO_RUNS = Tally()


def merged(tallies: Iterable[Tally]) -> Tally:
    """All of `tallies` together."""
    total = NO_RUNS
    for tally in tallies:
        total = total.plus(tally)
    return total


def minute_of(at: float) -> int:
    """The minute (since the epoch) holding the time `at`."""
    return math.floor(at / 60)


def hour_of(at: float) -> int:
    """The hour (since the epoch) holding the time `at`."""
    return math.floor(at / 3600)


def hourly(minutes: Mapping[int, Tally]) -> dict[int, Tally]:
    """Tallies by minute rolled up into tallies by hour."""
    hours: dict[int, Tally] = {}
    for minute, tally in minutes.items():
        hour = minute // 60
        hours[hour] = hours.get(hour, NO_RUNS).plus(tally)
    return hours


@attrs.frozen(kw_only=True)
class Window:
    """The buckets whose runs are exactly those of the last `hours` * 60 minutes: whole
    hours, and the minutes of the oldest hour partly in (none when it ends on an hour)."""

    #: Hours (since the epoch) whose every minute is in, oldest first; the last holds now.
    hours: range
    #: Minutes (since the epoch) of the hour before `hours` that are in, oldest first.
    minutes: range

    @property
    def first_minute(self) -> int:
        """The oldest minute in."""
        return self.minutes.start if self.minutes else self.hours.start * 60


def window(now: float, hours: int) -> Window:
    """The last `hours` hours up to `now` as buckets: the minute holding `now` and the
    `hours` * 60 - 1 minutes before it, read as whole hours where an hour is wholly in
    (the current one: its minutes after now hold nothing yet) and as minutes where only
    part of it is, so "1h" is the last 60 minutes, not the current clock hour."""
    if hours < 1:
        raise ValueError(f"a window is an hour or more, not {hours!r}")
    current = minute_of(now)
    first_hour = current // 60 - hours + 1
    return Window(
        hours=range(first_hour, current // 60 + 1),
        minutes=range(current - hours * 60 + 1, first_hour * 60),
    )
