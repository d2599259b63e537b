"""What a run's end writes: one decision, from how the run ended to every effect.

Everything that decides what settling a run writes lives in this module
and the three beside it (below); the worker gathers (runs the job, asks its `retry_in` hook), calls
`settle` once, and the store applies the answer in one script.

`settle` gives a closed union, each variant carrying its effects:

  ==============  =====================================  ====================
  variant         when                                   death hooks
  ==============  =====================================  ====================
  `Ack`           `perform` returned                     no
  `ToRetry`       it raised, a retry is left and the     no
                  hook didn't end it
  `ToDead`        no retry left, `retry=False`/`0`, the  yes
                  hook returned `KILL`, or writing the
                  failure failed too often
  `Discarded`     the hook returned `DISCARD`            no
  `Cancelled`     it ended after a cancel was asked for  no
                  (`Client.cancel`), unless it returned
  `Expired`       it wasn't started by its `expires_at`  no
                  (`expire`, at fetch), or its retry
                  would come after it
  ==============  =====================================  ====================

(`failure.decide` holds the hook table.)  The effects:

* locks: `locks.lock_effects` (extended through a retry's wait, released
  when the run or the job ends, by the lock's kind).
* status (tracked jobs only): `status.next_status` of the run's end.
* records: the attempt (every end but a success) and the run history (when
  kept, for a run); a run goes into its job's own history only when the
  job is tracked or has failed before (else its class's history is enough).
* result (jobs keeping one, `domain.results`): every end for good stores
  its record (the return value, or the outcome with its error); a retry
  stores none, only keeps the job findable by jid (`result_of`).

A cancelled or expired job ends for good as any end does (locks released,
a terminal status), and is never retried.

If writing a failure fails (Redis away), the same inputs are settled again
as `interrupted` (the job's interruptions counted, n in all): a job that
would retry is retried after `INTERRUPT_DELAY` * n instead, whatever the hook
said, and goes to dead once interrupted more than `MAX_INTERRUPTS` times; an
end for good stays one.

This module holds the decision; its parts sit beside it: the records
(`settlement_records`), what is derived from a settlement (`settlement_outcomes`:
`is_terminal`, `attempt_outcome`, `interruption_reason`, `result_of`) and the
builders of its effects (`settlement_effects`). Callers import all of it from
here (`__all__`).

Pure: no I/O, no clock, no randomness (`now` and the jitter are parameters).
"""

from __future__ import annotations

from typing import TypeVar, assert_never

import attrs

from cogworker.domain import failure, limits, results, status
from cogworker.domain.job import ErrorRecord, JobRecord, with_failure
from cogworker.domain.locks import held_locks, lock_effects
from cogworker.domain.settlement_effects import (
    attempt_record,
    dropped_effects,
    failure_effects,
    run_record,
    run_sample,
    unrun_effects,
)
from cogworker.domain.settlement_outcomes import (
    attempt_outcome,
    failed_outcome,
    interruption_reason,
    is_terminal,
    result_of,
)
from cogworker.domain.settlement_records import (
    INTERRUPT_DELAY,
    MAX_INTERRUPTS,
    Ack,
    Cancelled,
    DeathCause,
    Discarded,
    Dropped,
    Effects,
    EndedByCancel,
    Expired,
    Failure,
    Keeping,
    Raised,
    Returned,
    Run,
    RunEnd,
    Settlement,
    ToDead,
    ToRetry,
    Unsuccessful,
)

# The one place the rest of the code base imports the decision, its records and
# what is derived from a settlement from; the modules behind it are its parts.
__all__ = [
    "INTERRUPT_DELAY",
    "MAX_INTERRUPTS",
    "Ack",
    "Cancelled",
    "DeathCause",
    "Discarded",
    "Dropped",
    "Effects",
    "EndedByCancel",
    "Expired",
    "Failure",
    "Keeping",
    "Raised",
    "Returned",
    "Run",
    "RunEnd",
    "Settlement",
    "ToDead",
    "ToRetry",
    "Unsuccessful",
    "attempt_outcome",
    "cancel_waiting",
    "expire",
    "failed_outcome",
    "interruption_reason",
    "is_terminal",
    "result_of",
    "settle",
]


def settle(
    run: Run,
    end: RunEnd,
    keeping: Keeping,
    *,
    now: float,
    jitter: float,
    interrupted: bool = False,
) -> Settlement:
    """What `run`'s end writes.

    `now` is when the write is made; `jitter` in [0, 30) spreads the default
    backoff; `interrupted`: the first write of this failure failed.
    """
    decided: Settlement
    match end:
        case Returned():
            decided = _ack(run, keeping)
        case Raised():
            decided = _failure(run, end, keeping, now, jitter, interrupted)
        case EndedByCancel(error=error):
            decided = _cancelled(run, error, keeping, now)
        case _:
            assert_never(end)
    value = end.value if isinstance(end, Returned) else None
    return _with_result(decided, result_of(decided, run.job, value, now))


def expire(job: JobRecord, keeping: Keeping, *, now: float) -> Expired:
    """What dropping `job`, fetched at `now` past its expiry and never started, writes."""
    message = f"not started by its expiry at {job.expires_at}"
    expired = Expired(job=job, effects=unrun_effects(job, "expired", message, keeping, now))
    return _with_result(expired, result_of(expired, job, None, now))


def cancel_waiting(job: JobRecord, keeping: Keeping, *, now: float) -> Cancelled:
    """What cancelling `job` while it waits (queued, scheduled, to retry) writes."""
    message = "cancelled before it started"
    cancelled = Cancelled(job=job, effects=unrun_effects(job, "cancelled", message, keeping, now))
    return _with_result(cancelled, result_of(cancelled, job, None, now))


_Decided = TypeVar("_Decided", bound=Settlement)


def _with_result(decided: _Decided, kept: results.Kept | None) -> _Decided:
    if kept is None:
        return decided
    return attrs.evolve(decided, effects=attrs.evolve(decided.effects, result=kept))


_SUCCEEDED = status.Succeeded()


def _ack(run: Run, keeping: Keeping) -> Ack:
    job = run.job
    unique_effect, running_effect = lock_effects(
        job, held_locks(job), keeping.unique_lock_ttl, retry_at=None, now=run.ended_at
    )
    tracked = status.is_tracked(job, keeping.track_all)
    effects = Effects(
        unique_lock=unique_effect,
        running_lock=running_effect,
        status=status.next_status(None, _SUCCEEDED) if tracked else None,
        history=run_record(run, "success", None) if keeping.history else None,
        history_per_job=tracked or job.retries_made > 0,
        sample=run_sample(run, keeping, failed=False),
    )
    return Ack(jid=job.jid, class_name=job.class_name, effects=effects)


def _failure(
    run: Run, raised: Raised, keeping: Keeping, now: float, jitter: float, interrupted: bool
) -> Failure | Expired:
    decided = failure.decide(run.job, raised.answer)
    filed = with_failure(run.job, raised.error, failed_at=run.ended_at)
    interruptions = 0
    if interrupted:
        interruptions = (run.job.interrupted_count or 0) + 1
        filed = attrs.evolve(filed, interrupted_count=interruptions)
    if _retry_too_late(decided.decision, filed, run.ended_at, jitter):
        return _expired_retry(run, raised, filed, keeping, now)
    placed = _placed(decided.decision, filed, run.ended_at, now, jitter, interruptions)
    effects = failure_effects(run, raised, placed, keeping, now)
    return attrs.evolve(placed, effects=effects, note=decided.note)


def _retry_too_late(
    decision: failure.FailureDecision, filed: JobRecord, ended_at: float, jitter: float
) -> bool:
    """Whether the retry, as the job's policy places it, would start at or past its expiry
    (an interruption's later retry isn't counted: a fetch past the expiry drops it too)."""
    if not isinstance(decision, failure.Retry) or filed.expires_at is None:
        return False
    delay = failure.retry_delay(decision, filed.retries_made, jitter)
    return limits.is_expired(filed, ended_at + delay)


def _expired_retry(
    run: Run, raised: Raised, filed: JobRecord, keeping: Keeping, now: float
) -> Expired:
    """A failed run whose retry would start past the job's expiry: dropped as expired."""
    record = attempt_record(filed, run.ended_at, raised.error, "expired", raised.timed_out)
    effects = dropped_effects(run.job, "expired", record, keeping, now)
    history = None
    if keeping.history:
        history = run_record(run, "expired", raised.error, raised.timed_out)
    sample = run_sample(run, keeping, failed=True)
    return Expired(job=filed, effects=attrs.evolve(effects, history=history, sample=sample))


def _cancelled(run: Run, error: ErrorRecord, keeping: Keeping, now: float) -> Cancelled:
    record = attempt_record(run.job, run.ended_at, error, "cancelled")
    effects = dropped_effects(run.job, "cancelled", record, keeping, now)
    history = run_record(run, "cancelled", error) if keeping.history else None
    sample = run_sample(run, keeping, failed=True)
    return Cancelled(job=run.job, effects=attrs.evolve(effects, history=history, sample=sample))


def _placed(
    decision: failure.FailureDecision,
    filed: JobRecord,
    ended_at: float,
    now: float,
    jitter: float,
    interruptions: int,
) -> Failure:
    """Where the failed job goes (effects still to be filled in)."""
    none = Effects()
    match decision:
        case failure.Retry() if interruptions > MAX_INTERRUPTS:
            return ToDead(job=filed, at=now, effects=none, cause="interrupted")
        case failure.Retry() if interruptions:
            return ToRetry(job=filed, at=now + INTERRUPT_DELAY * interruptions, effects=none)
        case failure.Retry():
            delay = failure.retry_delay(decision, filed.retries_made, jitter)
            return ToRetry(job=filed, at=ended_at + delay, effects=none)
        case failure.Dead(killed=killed):
            return ToDead(
                job=filed, at=now, effects=none, cause="killed" if killed else "exhausted"
            )
        case failure.Discard():
            return Discarded(job=filed, effects=none)
        case _:
            assert_never(decision)
