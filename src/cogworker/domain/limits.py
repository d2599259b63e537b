"""Time limits and expiry: the seconds a user may give, and when a job has expired.

A limit (`timeout=`, `expires_in=`) is a positive, finite number of
seconds; anything else is refused where it is given, with an error naming
the value.  A job expires when it hasn't started by its `expires_at`: it
is then dropped (settled `Expired`) when a worker fetches it or when its
retry would come after it.

Pure: `now` is a parameter.
"""

from __future__ import annotations

import math

from cogworker.domain.job import JobRecord


def checked_seconds(name: str, value: object) -> float:
    """`value` as a limit in seconds; a ValueError naming it if it isn't a positive,
    finite number (a bool isn't one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}")
    seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}")
    return seconds


def expiry_of(now: float, expires_in: object = None, expires_at: object = None) -> float | None:
    """When a job enqueued at `now` expires: `expires_at` (a unix time), or `expires_in`
    seconds from `now`; None for neither.  Both at once is an error."""
    if expires_in is not None and expires_at is not None:
        raise ValueError("give expires_in or expires_at, not both")
    if expires_in is not None:
        return now + checked_seconds("expires_in", expires_in)
    if expires_at is not None:
        if isinstance(expires_at, bool) or not isinstance(expires_at, (int, float)):
            raise ValueError(f"expires_at must be a unix time, got {expires_at!r}")
        if not math.isfinite(expires_at):
            raise ValueError(f"expires_at must be a finite unix time, got {expires_at!r}")
        return float(expires_at)
    return None


def is_expired(job: JobRecord, at: float) -> bool:
    """Whether `job`, not started yet, would start too late at `at`."""
    return job.expires_at is not None and at >= job.expires_at
