"""The retry budget and the default backoff."""

from __future__ import annotations

from cogworker.domain.job import JobRecord

#: The budget of a job whose `retry` option is `True` or unset.
DEFAULT_MAX_RETRIES = 25
#: The default backoff's jitter is drawn from [0, JITTER_SPAN).
JITTER_SPAN = 30
#: The longest delay (and lock TTL) written: a hundred years.  Longer ones
#: ("park it": 1e300, sys.maxsize) are capped to it: it still means "not in
#: this system's lifetime", and Redis can add it to its millisecond clock
#: (it refuses TTLs past about 9.2e15 s).  The Lua scripts check the same bound.
LONGEST_DELAY = 3_155_760_000


def max_retries(retry: bool | int) -> int:
    """How many retries a job may have: `True` gives 25, an int n gives n, `False`/`0` none."""
    if retry is True:
        return DEFAULT_MAX_RETRIES
    if retry is False:
        return 0
    return max(retry, 0)


def default_backoff(count: int, jitter: float) -> float:
    """Seconds before retry number `count` (1 for the first), `jitter` in [0, 30).

    Grows with the count; the jitter, scaled by the count, keeps a burst of
    failures from coming back all in the same second.
    """
    return float(count**4 + 15) + jitter * (count + 1)


def is_last_failure(job: JobRecord) -> bool:
    """Whether a failure of `job`'s current attempt leaves no retry to make."""
    return job.retries_made + 1 > max_retries(job.retry)
