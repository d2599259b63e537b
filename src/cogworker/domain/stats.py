"""Day buckets for the processed / failed counters, and the Overview's runs per day."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Mapping, Sequence

import attrs

_DAY = 86_400
_EPOCH = dt.date(1970, 1, 1)

#: The periods the Overview's "runs per day" chart offers: query value -> days.
PERIODS: Mapping[str, int] = {"7d": 7, "30d": 30, "90d": 90}


@attrs.frozen(kw_only=True)
class DayRuns:
    """One UTC day's runs: processed, failed and (the difference) succeeded."""

    day: str
    processed: int
    failed: int
    succeeded: int


def day_of(timestamp: float) -> str:
    """The UTC day (`YYYY-MM-DD`) a unix timestamp falls in."""
    return _day_named(int(timestamp // _DAY))


@functools.lru_cache(maxsize=4)
def _day_named(days_since_epoch: int) -> str:
    """Every batch of acks names its day: formatted once a day, not once a batch."""
    return (_EPOCH + dt.timedelta(days=days_since_epoch)).isoformat()


def days_back(timestamp: float, count: int) -> tuple[str, ...]:
    """The `count` UTC days ending with the one `timestamp` is in, oldest first."""
    return tuple(day_of(timestamp - _DAY * back) for back in range(count - 1, -1, -1))


def runs_per_day(
    processed: Mapping[str, int], failed: Mapping[str, int], days: Sequence[str]
) -> tuple[DayRuns, ...]:
    """Each of `days`, in order, with its counters (0 for a day without one).

    `succeeded` is processed - failed, never below 0: the counters are two
    keys, and one may be reset (or expire) without the other.
    """
    return tuple(_day_runs(day, processed.get(day, 0), failed.get(day, 0)) for day in days)


def _day_runs(day: str, processed: int, failed: int) -> DayRuns:
    return DayRuns(
        day=day, processed=processed, failed=failed, succeeded=max(processed - failed, 0)
    )
