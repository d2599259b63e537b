"""Properties of per-class metrics: buckets, tallies, their merging, and quantiles."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.class_metrics import (
    BOUNDS,
    BUCKETS,
    NO_RUNS,
    RunSample,
    Tally,
    bucket_of,
    hour_of,
    hourly,
    lower_bound,
    merged,
    minute_of,
    window,
)
from tests.domain.strategies import clock_times, run_micros, run_samples, tallies, timed_runs


def test_the_buckets_are_log_spaced_from_a_millisecond_to_ten_minutes() -> None:
    """Each bound is 1.5 to 1.7 times the one before, from 1 ms to 600 s."""
    assert (BOUNDS[0], BOUNDS[-1], BUCKETS) == (1_000, 600_000_000, 31)
    assert all(1.5 <= high / low <= 1.7 for low, high in itertools.pairwise(BOUNDS))


@given(run_micros)
def test_a_run_counts_in_the_bucket_whose_bounds_hold_it(micros: int) -> None:
    """A run's bucket is the first whose bound it doesn't pass (`le`), and it passes the
    bucket's lower bound."""
    bucket = bucket_of(micros)
    assert micros > lower_bound(bucket) or bucket == 0
    assert bucket == len(BOUNDS) or micros <= BOUNDS[bucket]


@pytest.mark.parametrize(
    ("duration", "micros"), [(0.0012, 1200), (-0.5, 0), (math.inf, 0), (math.nan, 0)]
)
def test_a_sample_is_the_run_time_in_whole_microseconds(duration: float, micros: int) -> None:
    """A duration is rounded to microseconds; one that can't be a run time counts as 0."""
    assert RunSample.of("q", duration, failed=False).micros == micros


@given(st.lists(run_samples, max_size=30))
def test_a_tally_counts_every_run_once(samples: list[RunSample]) -> None:
    """Runs, failures and the histogram's count all add up to what was recorded."""
    tally = Tally.of(samples)
    assert tally.runs == len(samples) == sum(tally.counts) == tally.cumulative()[-1]
    assert tally.failures == sum(sample.failed for sample in samples)
    assert tally.micros == sum(sample.micros for sample in samples)


@given(st.lists(run_samples, max_size=30))
def test_the_total_time_lies_within_the_buckets_resolution(samples: list[RunSample]) -> None:
    """The total time is between the sums of each run's bucket bounds (for runs under the
    last bound): the histogram's sum agrees with it to the buckets' resolution."""
    tally = Tally.of(sample for sample in samples if sample.micros <= BOUNDS[-1])
    low = sum(lower_bound(bucket) * count for bucket, count in enumerate(tally.counts))
    high = sum(bound * count for bound, count in zip(BOUNDS, tally.counts, strict=False))
    assert low <= tally.micros <= high


@given(tallies, tallies, tallies)
def test_tallies_merge_in_any_order(a: Tally, b: Tally, c: Tally) -> None:
    """Merging is associative and commutative, with no runs as its identity."""
    assert a.plus(b).plus(c) == a.plus(b.plus(c)) == merged([c, b, a])
    assert a.plus(NO_RUNS) == a == merged([a])


@given(st.lists(run_samples, max_size=20), st.lists(run_samples, max_size=20))
def test_merging_two_tallies_is_tallying_their_runs_together(
    first: list[RunSample], second: list[RunSample]
) -> None:
    """A class's figures merged over two queues are those of all its runs."""
    assert Tally.of(first).plus(Tally.of(second)) == Tally.of(first + second)


@given(timed_runs)
def test_minutes_merged_into_hours_are_the_hours_recorded_directly(
    runs: list[tuple[float, RunSample]],
) -> None:
    """Rolling per-minute tallies up gives the tallies of recording each hour directly."""
    by_minute: dict[int, list[RunSample]] = defaultdict(list)
    by_hour: dict[int, list[RunSample]] = defaultdict(list)
    for at, sample in runs:
        by_minute[minute_of(at)].append(sample)
        by_hour[hour_of(at)].append(sample)
    minutes = {minute: Tally.of(samples) for minute, samples in by_minute.items()}
    assert hourly(minutes) == {hour: Tally.of(samples) for hour, samples in by_hour.items()}


@given(clock_times, st.integers(min_value=1, max_value=72))
def test_a_window_covers_exactly_the_last_minutes_up_to_now(now: float, hours: int) -> None:
    """A window of `hours` hours reads each of the last `hours` * 60 minutes (the one holding
    `now` the last) once, as whole hours and fewer than 60 minutes of the oldest hour
    partly in, and nothing older; of the future only the current hour's minutes after now."""
    span = window(now, hours)
    current = minute_of(now)
    in_hours = [minute for hour in span.hours for minute in range(hour * 60, hour * 60 + 60)]
    read = [*span.minutes, *in_hours]
    assert len(read) == len(set(read))
    assert {minute for minute in read if minute <= current} == set(
        range(current - hours * 60 + 1, current + 1)
    )
    assert max(read) == hour_of(now) * 60 + 59
    assert len(span.hours) == hours
    assert len(span.minutes) < 60
    assert span.first_minute == current - hours * 60 + 1


@given(clock_times)
def test_one_hour_ten_minutes_into_the_clock_hour_reaches_into_the_hour_before(
    now: float,
) -> None:
    """At 10 past, "1h" reads the current hour and the last 50 minutes of the one before,
    where a run 15 minutes ago counts."""
    at_ten_past = hour_of(now) * 3600 + 600.0
    span = window(at_ten_past, 1)
    assert list(span.hours) == [hour_of(now)]
    assert span.minutes == range(hour_of(now) * 60 - 49, hour_of(now) * 60)
    assert minute_of(at_ten_past - 15 * 60) in span.minutes


def test_a_window_of_no_hours_is_refused() -> None:
    """A window is an hour or more: 0 is a ValueError naming it."""
    with pytest.raises(ValueError, match="a window is an hour or more, not 0"):
        window(1e9, 0)


@given(st.lists(run_samples, min_size=1, max_size=30), st.floats(min_value=0, max_value=1))
def test_a_quantile_falls_in_the_bucket_of_the_run_at_its_rank(
    samples: list[RunSample], q: float
) -> None:
    """The estimate lies within the bounds of the bucket holding the run at rank q·n."""
    tally = Tally.of(samples)
    estimate = tally.quantile(q)
    assert estimate is not None
    ranked = sorted(sample.micros for sample in samples)
    bucket = bucket_of(ranked[max(math.ceil(q * len(ranked)), 1) - 1])
    high = BOUNDS[min(bucket, len(BOUNDS) - 1)]
    assert lower_bound(bucket) / 1e6 <= estimate <= high / 1e6


@given(tallies, st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1))
def test_quantiles_grow_with_q(tally: Tally, q1: float, q2: float) -> None:
    """A higher quantile is never estimated below a lower one; no runs: no estimate."""
    low, high = tally.quantile(min(q1, q2)), tally.quantile(max(q1, q2))
    if tally.runs == 0:
        assert low is high is None
    else:
        assert low is not None
        assert high is not None
        assert low <= high


def test_a_quantile_outside_zero_to_one_is_refused() -> None:
    """q is a fraction of the runs."""
    with pytest.raises(ValueError, match="quantile"):
        NO_RUNS.quantile(1.5)


def test_a_tally_needs_a_count_per_bucket() -> None:
    """A histogram of the wrong length can't be made."""
    with pytest.raises(ValueError, match="bucket counts"):
        Tally(counts=(1, 2))
