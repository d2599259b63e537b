"""What a run's end writes: one decision, from how the run ended to every effect.

Everything that decides what settling a run writes lives in this module;
the worker gathers (runs the job, asks its `retry_in` hook), calls
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

Pure: no I/O, no clock, no randomness (`now` and the jitter are parameters).
"""

from __future__ import annotations

from typing import Literal, TypeAlias, TypeVar, assert_never, cast

import attrs

from cogworker.domain import failure, limits, results, status
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.deadlines import TimedOut
from cogworker.domain.job import ErrorRecord, JobRecord, with_failure
from cogworker.domain.locks import LockEffect, held_locks, lock_effects
from cogworker.domain.records import AttemptRecord, RunRecord
from cogworker.domain.status import AttemptOutcome

#: An interrupted job is retried after INTERRUPT_DELAY * its interruptions...
INTERRUPT_DELAY = 30.0
#: ...and goes to dead once interrupted more often than this.
MAX_INTERRUPTS = 5


@attrs.frozen(kw_only=True)
class Run:
    """One run of a job, as the worker saw it."""

    job: JobRecord
    queue: str
    #: The worker process's identity.
    process: str
    started_at: float
    ended_at: float


@attrs.frozen(kw_only=True)
class Returned:
    """The run's `perform` returned; `value`: what it returned as JSON, when its result is
    kept (`results.encoded_value`)."""

    value: str | None = None


@attrs.frozen(kw_only=True)
class Raised:
    """The run raised `error`; `answer` is what the class's `retry_in` hook said of it."""

    error: ErrorRecord
    answer: failure.HookAnswer = failure.NO_HOOK
    #: Set when it was its time limit: told at it ("soft"), or filed for it ("hard").
    timed_out: TimedOut | None = None


@attrs.frozen(kw_only=True)
class EndedByCancel:
    """The run didn't return after a cancel was asked for: `error` is what it ended with
    (the `JobCancelledError` raised into it, or whatever it raised instead)."""

    error: ErrorRecord


RunEnd: TypeAlias = Returned | Raised | EndedByCancel


@attrs.frozen(kw_only=True)
class Keeping:
    """What the worker's configuration says to record and hold."""

    #: Track every job's status (else only jobs enqueued with `track_status`).
    track_all: bool
    #: Keep run history records.
    history: bool
    #: A unique lock's TTL when the job doesn't carry its own.
    unique_lock_ttl: float
    #: Add each run to its class's metrics (`domain.class_metrics`).
    metrics: bool = True


@attrs.frozen(kw_only=True)
class Effects:
    """What settling writes besides moving the job."""

    unique_lock: LockEffect | None = None
    running_lock: LockEffect | None = None
    #: The job's new status; None when its status isn't tracked.
    status: status.Status | None = None
    attempt: AttemptRecord | None = None
    history: RunRecord | None = None
    #: Whether the history record goes into the job's own list too.
    history_per_job: bool = False
    #: What the run adds to its class's metrics; None when it isn't counted.
    sample: RunSample | None = None
    #: The result kept for a waiter (`result_of`); None when the job keeps none.
    result: results.Kept | None = None


@attrs.frozen(kw_only=True)
class Ack:
    """The run succeeded: the job is done."""

    jid: str
    class_name: str
    effects: Effects


@attrs.frozen(kw_only=True)
class ToRetry:
    """File `job` (one failure more counted) in the retry set, to run again at `at`."""

    job: JobRecord
    at: float
    effects: Effects
    note: failure.Note | None = None


#: Why a job goes to dead: no retry left, its `retry_in` returned `KILL`, or
#: writing its failures failed too often.
DeathCause: TypeAlias = Literal["exhausted", "killed", "interrupted"]


@attrs.frozen(kw_only=True)
class ToDead:
    """File `job` in dead, scored `at`; the death hooks run once it is written."""

    job: JobRecord
    at: float
    effects: Effects
    cause: DeathCause = "exhausted"
    note: failure.Note | None = None


@attrs.frozen(kw_only=True)
class Discarded:
    """Drop `job`: neither retry nor dead, no death hooks (counted as failed)."""

    job: JobRecord
    effects: Effects
    note: failure.Note | None = None


@attrs.frozen(kw_only=True)
class Cancelled:
    """Drop `job`: cancelled on request; not retried, no death hooks."""

    job: JobRecord
    effects: Effects


@attrs.frozen(kw_only=True)
class Expired:
    """Drop `job`: not started by its expiry; never run again, no death hooks."""

    job: JobRecord
    effects: Effects


Failure: TypeAlias = ToRetry | ToDead | Discarded
#: The ends that are neither a success nor a failure.
Dropped: TypeAlias = Cancelled | Expired
#: Every settlement but a success: each records an attempt.
Unsuccessful: TypeAlias = Failure | Dropped
Settlement: TypeAlias = Ack | Unsuccessful


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
    expired = Expired(job=job, effects=_unrun_effects(job, "expired", message, keeping, now))
    return _with_result(expired, result_of(expired, job, None, now))


def cancel_waiting(job: JobRecord, keeping: Keeping, *, now: float) -> Cancelled:
    """What cancelling `job` while it waits (queued, scheduled, to retry) writes."""
    message = "cancelled before it started"
    cancelled = Cancelled(job=job, effects=_unrun_effects(job, "cancelled", message, keeping, now))
    return _with_result(cancelled, result_of(cancelled, job, None, now))


def result_of(
    settlement: Settlement, job: JobRecord, value: str | None, now: float
) -> results.Kept | None:
    """The result `settlement` of `job` keeps (None when the job keeps none): a success's
    `value` (JSON; `null` if none was encoded), an end for good's outcome and error, and
    for a retry no record, the job kept findable until its retry's run."""
    match settlement:
        case Ack():
            return results.final(job, results.success_record(value or "null"))
        case ToRetry(at=at):
            return results.pending(job, at, now)
        case ToDead() | Discarded() | Cancelled() | Expired():
            attempt = settlement.effects.attempt
            error_class = attempt.error_class if attempt else ""
            message = attempt.error_message if attempt else ""
            # Not a retry: an end for good, whose attempt outcome is a final one.
            outcome = cast("results.FinalOutcome", attempt_outcome(settlement))
            record = results.ended_record(outcome, error_class, message)
            return results.final(job, record)
        case _:
            assert_never(settlement)


_Decided = TypeVar("_Decided", bound=Settlement)


def _with_result(decided: _Decided, kept: results.Kept | None) -> _Decided:
    if kept is None:
        return decided
    return attrs.evolve(decided, effects=attrs.evolve(decided.effects, result=kept))


def _unrun_effects(
    job: JobRecord, reason: status.DropReason, message: str, keeping: Keeping, now: float
) -> Effects:
    record = AttemptRecord(
        attempt=job.retries_made, failed_at=now, error_class="", error_message=message,
        outcome=reason,
    )  # fmt: skip
    return _dropped_effects(job, reason, record, keeping, now)


def is_terminal(settlement: Settlement) -> bool:
    """Whether the job ends for good here (nothing of it runs again)."""
    return not isinstance(settlement, ToRetry)


def attempt_outcome(settlement: Unsuccessful) -> AttemptOutcome:
    """How an attempt that didn't succeed ended, as the attempts log and run history say it."""
    if isinstance(settlement, Cancelled):
        return "cancelled"
    if isinstance(settlement, Expired):
        return "expired"
    return failed_outcome(settlement)


def failed_outcome(settlement: Failure) -> status.FailedOutcome:
    """How a failed attempt ended: where the job went."""
    match settlement:
        case ToRetry():
            return "retrying"
        case ToDead(cause="killed"):
            return "killed"
        case ToDead():
            return "dead"
        case Discarded():
            return "discarded"
        case _:
            assert_never(settlement)


def interruption_reason(settlement: Unsuccessful) -> str:
    """Where an interrupted failure goes, and why (for the log line)."""
    match settlement:
        case ToRetry(job=job, at=at):
            count = job.interrupted_count or 0
            return f"retrying at {at:.0f} (interruption {count} of at most {MAX_INTERRUPTS})"
        case ToDead(cause="killed"):
            return "moved to dead: ended by its retry_in (killed)"
        case ToDead(cause="interrupted"):
            return f"moved to dead: interrupted more than {MAX_INTERRUPTS} times"
        case ToDead():
            return "moved to dead: no retries left"
        case Discarded():
            return "discarded by its retry_in"
        case Cancelled():
            return "cancelled"
        case Expired():
            return "expired: its retry would come after its expiry"
        case _:
            assert_never(settlement)


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
        history=_history(run, "success", None) if keeping.history else None,
        history_per_job=tracked or job.retries_made > 0,
        sample=_sample(run, keeping, failed=False),
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
    effects = _failure_effects(run, raised, placed, keeping, now)
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
    record = _attempt(filed, run.ended_at, raised.error, "expired", raised.timed_out)
    effects = _dropped_effects(run.job, "expired", record, keeping, now)
    history = _history(run, "expired", raised.error, raised.timed_out) if keeping.history else None
    sample = _sample(run, keeping, failed=True)
    return Expired(job=filed, effects=attrs.evolve(effects, history=history, sample=sample))


def _cancelled(run: Run, error: ErrorRecord, keeping: Keeping, now: float) -> Cancelled:
    record = _attempt(run.job, run.ended_at, error, "cancelled")
    effects = _dropped_effects(run.job, "cancelled", record, keeping, now)
    history = _history(run, "cancelled", error) if keeping.history else None
    sample = _sample(run, keeping, failed=True)
    return Cancelled(job=run.job, effects=attrs.evolve(effects, history=history, sample=sample))


def _dropped_effects(
    job: JobRecord, reason: status.DropReason, record: AttemptRecord, keeping: Keeping, now: float
) -> Effects:
    """A cancelled or expired job's effects but its run's history: it ends for good."""
    unique_effect, running_effect = lock_effects(
        job, held_locks(job), keeping.unique_lock_ttl, retry_at=None, now=now
    )
    tracked = status.is_tracked(job, keeping.track_all)
    return Effects(
        unique_lock=unique_effect,
        running_lock=running_effect,
        status=status.next_status(None, status.Dropped(reason=reason)) if tracked else None,
        attempt=record,
        history_per_job=True,
    )


def _attempt(
    filed: JobRecord,
    ended_at: float,
    error: ErrorRecord,
    outcome: AttemptOutcome,
    timed_out: TimedOut | None = None,
) -> AttemptRecord:
    return AttemptRecord(
        attempt=filed.retries_made,
        failed_at=ended_at,
        error_class=error.class_name,
        error_message=error.message,
        outcome=outcome,
        timed_out=timed_out,
    )


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


def _failure_effects(
    run: Run, raised: Raised, placed: Failure, keeping: Keeping, now: float
) -> Effects:
    job, filed = run.job, placed.job
    outcome = failed_outcome(placed)
    retry_at = placed.at if isinstance(placed, ToRetry) else None
    unique_effect, running_effect = lock_effects(
        job, held_locks(job), keeping.unique_lock_ttl, retry_at=retry_at, now=now
    )
    tracked = status.is_tracked(job, keeping.track_all)
    attempt = _attempt(filed, run.ended_at, raised.error, outcome, raised.timed_out)
    return Effects(
        unique_lock=unique_effect,
        running_lock=running_effect,
        status=status.next_status(None, status.Failed(outcome=outcome)) if tracked else None,
        attempt=attempt,
        history=_history(run, outcome, raised.error, raised.timed_out) if keeping.history else None,
        history_per_job=True,
        sample=_sample(run, keeping, failed=True),
    )


def _sample(run: Run, keeping: Keeping, *, failed: bool) -> RunSample | None:
    """What `run` adds to its class's metrics: every run that ended counts, and every
    end but a success is a failure."""
    if not keeping.metrics:
        return None
    return RunSample.of(run.queue, run.ended_at - run.started_at, failed=failed)


def _history(
    run: Run, outcome: str, error: ErrorRecord | None, timed_out: TimedOut | None = None
) -> RunRecord:
    return RunRecord(
        jid=run.job.jid,
        class_name=run.job.class_name,
        queue=run.queue,
        started_at=run.started_at,
        ended_at=run.ended_at,
        outcome=outcome,
        process=run.process,
        error=None if error is None else error.summary,
        timed_out=timed_out,
    )
