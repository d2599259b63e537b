"""The effects a failed or dropped run's settlement writes besides moving the job: its
locks, status, attempt record, run history and metrics sample.

`settlement.settle` places the job, then builds its effects here. Pure, as `settlement` is.
"""

from __future__ import annotations

import attrs

from cogworker.domain import status
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.deadlines import TimedOut
from cogworker.domain.job import ErrorRecord, JobRecord
from cogworker.domain.locks import held_locks, lock_effects
from cogworker.domain.records import AttemptRecord, RunRecord
from cogworker.domain.settlement_outcomes import failed_outcome
from cogworker.domain.settlement_records import Effects, Failure, Keeping, Raised, Run, ToRetry
from cogworker.domain.status import AttemptOutcome


def unrun_effects(
    job: JobRecord, reason: status.DropReason, message: str, keeping: Keeping, now: float
) -> Effects:
    """A job dropped before it ran (`expire`, `cancel_waiting`): `message` says why."""
    record = AttemptRecord(
        attempt=job.retries_made, failed_at=now, error_class="", error_message=message,
        outcome=reason,
    )  # fmt: skip
    return dropped_effects(job, reason, record, keeping, now)


def dropped_effects(
    job: JobRecord, reason: status.DropReason, record: AttemptRecord, keeping: Keeping, now: float
) -> Effects:
    """A cancelled or expired job's effects but its run's history: it ends for good."""
    ended = ended_effects(job, keeping, status.Dropped(reason=reason), retry_at=None, now=now)
    return attrs.evolve(ended, attempt=record, history_per_job=True)


def ended_effects(
    job: JobRecord, keeping: Keeping, event: status.Event, *, retry_at: float | None, now: float
) -> Effects:
    """The locks and status of `job` as its run ends with `event` (its records still to
    be added): the locks kept through a retry's wait, else released by their kind."""
    unique_effect, running_effect = lock_effects(
        job, held_locks(job), keeping.unique_lock_ttl, retry_at=retry_at, now=now
    )
    tracked = status.is_tracked(job, keeping.track_all)
    return Effects(
        unique_lock=unique_effect,
        running_lock=running_effect,
        status=status.next_status(None, event) if tracked else None,
    )


def attempt_record(
    filed: JobRecord,
    ended_at: float,
    error: ErrorRecord,
    outcome: AttemptOutcome,
    timed_out: TimedOut | None = None,
) -> AttemptRecord:
    """The attempts log's record of a run that ended in `error`."""
    return AttemptRecord(
        attempt=filed.retries_made,
        failed_at=ended_at,
        error_class=error.class_name,
        error_message=error.message,
        outcome=outcome,
        timed_out=timed_out,
    )


def failure_effects(
    run: Run, raised: Raised, placed: Failure, keeping: Keeping, now: float
) -> Effects:
    """A failed run's effects, by where `placed` sends its job."""
    outcome = failed_outcome(placed)
    retry_at = placed.at if isinstance(placed, ToRetry) else None
    event = status.Failed(outcome=outcome)
    ended = ended_effects(run.job, keeping, event, retry_at=retry_at, now=now)
    error, timed_out = raised.error, raised.timed_out
    return attrs.evolve(
        ended,
        attempt=attempt_record(placed.job, run.ended_at, error, outcome, timed_out),
        history=run_record(run, outcome, error, timed_out) if keeping.history else None,
        history_per_job=True,
        sample=run_sample(run, keeping, failed=True),
    )


def run_sample(run: Run, keeping: Keeping, *, failed: bool) -> RunSample | None:
    """What `run` adds to its class's metrics: every run that ended counts, and every
    end but a success is a failure."""
    if not keeping.metrics:
        return None
    return RunSample.of(run.queue, run.ended_at - run.started_at, failed=failed)


def run_record(
    run: Run, outcome: str, error: ErrorRecord | None, timed_out: TimedOut | None = None
) -> RunRecord:
    """The run history's record of `run`."""
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
