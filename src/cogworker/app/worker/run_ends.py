"""How a run ended, as settled: returned, raised, or ended by an interrupt (a cancel, its
time limit).

A run a cancel reached and that didn't return ended as cancelled (an async
job's task cancellation becomes a `JobCancelledError`).  The watchdog
(`watchdog`) raises `JobTimeoutError` into a run at its limit: bare into a
sync job's thread, as a cancellation into an async job's task.  Whatever
the run then raised in answer becomes one `JobTimeoutError` saying the
limit, filed as an ordinary failure marked "soft" (`retry_in` sees it); a
run that returned anyway succeeded.
"""

from __future__ import annotations

import asyncio

import attrs

from cogworker.adapters import user_hooks
from cogworker.app.config import Config
from cogworker.app.job_base import JobBase
from cogworker.app.worker.interrupts import Interrupts
from cogworker.app.worker.running import Attempt
from cogworker.domain import deadlines, failure, settlement
from cogworker.domain.job import JobRecord
from cogworker.exceptions import JobCancelledError, JobTimeoutError, UnknownJobClassError

_RETURNED = settlement.Returned()


def limit_of(job_class: type | None, config: Config) -> float | None:
    """A run's time limit: its class's `timeout`, else `Config.default_timeout`."""
    options = getattr(job_class, "cogworker_options", None)
    own: float | None = None if options is None else options.timeout
    return deadlines.limit_of(own, config.default_timeout)


def soft_end(
    interrupts: Interrupts, config: Config, job: JobRecord, attempt: Attempt
) -> tuple[Attempt, deadlines.TimedOut | None]:
    """`attempt` as filed, and "soft" if its limit ended it (see the module's docstring)."""
    if attempt.error is None or interrupts.requested(job.jid) is not JobTimeoutError:
        return attempt, None  # the limit is looked up only for a run it ended
    if not isinstance(attempt.error, (JobTimeoutError, asyncio.CancelledError)):
        return attempt, "soft"  # it answered with an error of its own
    limit = limit_of(attempt.job_class, config)
    error = JobTimeoutError(f"{job.class_name} {job.jid} ran past its time limit ({limit}s)")
    return attrs.evolve(attempt, error=error), "soft"


def cancelled_end(
    interrupts: Interrupts, job: JobRecord, attempt: Attempt
) -> settlement.RunEnd | None:
    """The end of a run a cancel reached (None for any other): it didn't return."""
    asked = interrupts.requested(job.jid)
    if attempt.error is None or asked is not JobCancelledError:
        return None
    error = attempt.error
    if isinstance(error, asyncio.CancelledError):  # an async job's task, cancelled
        error = JobCancelledError(f"{job.class_name} {job.jid} was cancelled")
    return settlement.EndedByCancel(error=user_hooks.error_record(error))


def end_of(
    attempt: Attempt, answer: failure.HookAnswer | None, timed_out: deadlines.TimedOut | None
) -> settlement.RunEnd:
    """A run's end that no cancel reached: returned (with its kept result), or raised (with
    its hook's answer)."""
    if attempt.error is None:
        return _RETURNED if attempt.result is None else settlement.Returned(value=attempt.result)
    error = user_hooks.error_record(attempt.error)
    answer = failure.NO_HOOK if answer is None else answer
    return settlement.Raised(error=error, answer=answer, timed_out=timed_out)


def run_of(job: JobRecord, queue: str, attempt: Attempt, process: str) -> settlement.Run:
    """The run the settlement decides about: `job`, taken from `queue` by `process`."""
    return settlement.Run(
        job=job,
        queue=queue,
        process=process,
        started_at=attempt.started_at,
        ended_at=attempt.ended_at,
    )


def no_loop(job_class: type[JobBase]) -> UnknownJobClassError:
    """The error an async job ends with in a worker that runs no event loop."""
    return UnknownJobClassError(
        f"{job_class.class_path()} is an async job (async def perform) and this worker "
        "runs none: it was started with async_concurrency=0"
    )
