"""What `Client.result` and `AsyncClient.result` make of a wait's answer: the job's value,
or the error saying why there is none."""

from __future__ import annotations

import math

from cogworker.domain import results
from cogworker.domain.json_values import JSON
from cogworker.exceptions import JobResultError, ResultNotFoundError, ResultTimeoutError

#: What a wait found (`adapters.results.Found`): the record, or why there is none.
Found = results.Stored | str


def checked_timeout(timeout: object) -> float | None:
    """`timeout` as seconds to wait (None: as long as it takes); ValueError naming a value
    that can't be one."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ValueError(f"timeout must be a number of seconds or None, got {timeout!r}")
    if not math.isfinite(timeout) or timeout < 0:
        raise ValueError(f"timeout must be a finite number of seconds ≥ 0, got {timeout!r}")
    return float(timeout)


def value_of(jid: str, found: Found, timeout: float | None) -> JSON:
    """The value `jid` returned, from what its wait `found`; else the error saying how it
    ended (`JobResultError`), that it didn't within `timeout` (`ResultTimeoutError`), or
    that no job of that jid keeps a result now (`ResultNotFoundError`)."""
    if isinstance(found, results.Stored):
        if found.outcome == "success":
            return found.value
        raise JobResultError(jid, found.outcome, found.error_class, found.error_message)
    if found == "timed out":
        raise ResultTimeoutError(f"job {jid} didn't end within the timeout ({timeout}s)")
    if found == "gone":
        raise ResultNotFoundError(
            f"no result for job {jid}: it ended, but its result is gone before its keep_result "
            'was up: evicted by a Redis at its maxmemory (docs/results.md, "Under maxmemory")'
        )
    raise ResultNotFoundError(
        f"no result for job {jid}: not found or expired (a job keeps its result only when "
        "its class or the enqueuing client's Config sets keep_result, and for that long)"
    )
