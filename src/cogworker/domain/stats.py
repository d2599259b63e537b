"""Day buckets for the processed / failed counters."""

from __future__ import annotations

import datetime as dt

_DAY = 86_400


def day_of(timestamp: float) -> str:
    """The UTC day (`YYYY-MM-DD`) a unix timestamp falls in."""
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%d")


def days_back(timestamp: float, count: int) -> tuple[str, ...]:
    """The `count` UTC days ending with the one `timestamp` is in, oldest first."""
    return tuple(day_of(timestamp - _DAY * back) for back in range(count - 1, -1, -1))
