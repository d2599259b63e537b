"""The locks a job holds, and what becomes of them when a run ends or the job ends for good.

A job's payload names them (`unique`, `unique_lock`, `running_lock`):

* an ``until_executed`` lock is extended through a retry's wait and released
  when the job ends for good; a ``while_executing`` lock is released when
  the run ends, whatever follows; an ``until_executing`` one was let go of
  when the run started;
* a periodic run's running lock is released when the job ends for good.

Every release and extension is owner-checked where it is written: a lock
the job no longer holds is left alone.
"""

from __future__ import annotations

import attrs

from cogworker.domain import unique
from cogworker.domain.job import JobRecord


@attrs.frozen(kw_only=True)
class Release:
    """Delete the lock (if the job still holds it)."""


@attrs.frozen(kw_only=True)
class Extend:
    """Make the lock last `ttl` more seconds (if the job still holds it)."""

    ttl: float


@attrs.frozen(kw_only=True)
class LockEffect:
    """What becomes of one lock the job holds."""

    key: str
    change: Release | Extend


@attrs.frozen(kw_only=True)
class HeldLocks:
    """The locks a job's record says it may hold ("" for none)."""

    unique_mode: str = ""
    unique_lock: str = ""
    running_lock: str = ""


_NONE_HELD = HeldLocks()


def held_locks(job: JobRecord) -> HeldLocks:
    """The locks named in `job`'s payload (fields that aren't strings name none)."""
    extra = job.extra
    if "unique_lock" not in extra and "running_lock" not in extra:
        return _NONE_HELD  # most jobs: every run looks
    return HeldLocks(
        unique_mode=_text(extra.get("unique")),
        unique_lock=_text(extra.get("unique_lock")),
        running_lock=_text(extra.get("running_lock")),
    )


def locks_released_for_good(job: JobRecord) -> tuple[str, ...]:
    """The locks a job that ended outside a run lets go of (buried, deleted, killed)."""
    held = held_locks(job)
    return tuple(lock for lock in (held.unique_lock, held.running_lock) if lock)


def lock_effects(
    job: JobRecord,
    held: HeldLocks,
    default_ttl: float,
    *,
    retry_at: float | None,
    now: float,
) -> tuple[LockEffect | None, LockEffect | None]:
    """What becomes of `job`'s unique lock and running lock as a run ends: retried at
    `retry_at`, or (None) ended for good.  `default_ttl`: a unique lock's TTL when the job
    carries none."""
    return (
        _unique_lock_effect(job, held, default_ttl, retry_at=retry_at, now=now),
        _running_lock_effect(held, terminal=retry_at is None),
    )


def _unique_lock_effect(
    job: JobRecord, held: HeldLocks, default_ttl: float, *, retry_at: float | None, now: float
) -> LockEffect | None:
    if not held.unique_lock:
        return None
    if unique.held_while_running(held.unique_mode):
        return LockEffect(key=held.unique_lock, change=Release())
    if not unique.held_until_done(held.unique_mode):
        return None  # let go of when the run started
    if retry_at is None:
        return LockEffect(key=held.unique_lock, change=Release())
    ttl = unique.retry_ttl(unique.ttl_of(job.extra, default_ttl), retry_at, now)
    return LockEffect(key=held.unique_lock, change=Extend(ttl=ttl))


def _running_lock_effect(held: HeldLocks, *, terminal: bool) -> LockEffect | None:
    lock = held.running_lock
    return LockEffect(key=lock, change=Release()) if lock and terminal else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
