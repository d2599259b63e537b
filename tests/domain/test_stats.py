"""Properties of the day buckets and the Overview's runs per day."""

from __future__ import annotations

import datetime as dt
import itertools

from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.stats import PERIODS, DayRuns, day_of, days_back, runs_per_day
from tests.domain.strategies import clock_times, day_counters, day_names


def test_the_periods_on_offer() -> None:
    """The Overview chart accepts 7, 30 and 90 days, and nothing else."""
    assert dict(PERIODS) == {"7d": 7, "30d": 30, "90d": 90}


@given(clock_times)
def test_a_day_is_the_utc_date(now: float) -> None:
    """`day_of` names the UTC date a timestamp falls in."""
    assert day_of(now) == dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()


@given(clock_times, st.sampled_from(sorted(PERIODS.values())))
def test_days_back_ends_today(now: float, count: int) -> None:
    """`days_back` gives `count` consecutive days, oldest first, ending with now's."""
    days = days_back(now, count)
    assert len(days) == count
    assert days[-1] == day_of(now)
    dates = [dt.date.fromisoformat(day) for day in days]
    assert all(
        later - earlier == dt.timedelta(days=1) for earlier, later in itertools.pairwise(dates)
    )


@given(day_counters, day_counters, st.lists(day_names, max_size=12))
def test_one_row_per_day_in_order(
    processed: dict[str, int], failed: dict[str, int], days: list[str]
) -> None:
    """Each asked-for day gets a row, in the order asked, with its counters or 0."""
    rows = runs_per_day(processed, failed, days)
    assert [row.day for row in rows] == days
    assert [(row.processed, row.failed) for row in rows] == [
        (processed.get(day, 0), failed.get(day, 0)) for day in days
    ]


@given(day_counters, day_counters, st.lists(day_names, max_size=12))
def test_succeeded_is_the_difference_never_negative(
    processed: dict[str, int], failed: dict[str, int], days: list[str]
) -> None:
    """Succeeded is processed minus failed, clamped at 0 if the counters disagree."""
    for row in runs_per_day(processed, failed, days):
        assert row.succeeded == max(row.processed - row.failed, 0)
        assert row.succeeded >= 0


@given(clock_times, st.sampled_from(sorted(PERIODS)))
def test_an_empty_period_is_all_zeros(now: float, period: str) -> None:
    """With no counters at all, each day of the period shows no runs."""
    days = days_back(now, PERIODS[period])
    assert runs_per_day({}, {}, days) == tuple(
        DayRuns(day=day, processed=0, failed=0, succeeded=0) for day in days
    )
