"""What a run's log lines say: its start, its end, and a failure's reason.

Two lines a job at INFO, one a failure at WARNING: each line's fields are
built only when its level is on, since this is on every job's path.
"""

from __future__ import annotations

import logging

from cogworker.adapters import user_hooks
from cogworker.app.worker.running import Attempt
from cogworker.domain import failure, settlement
from cogworker.domain.job import JobRecord


def fields(job: JobRecord, queue: str, attempt: Attempt | None = None) -> dict[str, str]:
    """What a job's log lines carry: which job, and once it ran, how long it took."""
    carried = {"jid": job.jid, "class": job.class_name, "queue": queue}
    if attempt is not None:
        carried["duration"] = f"{attempt.ended_at - attempt.started_at:.6f}"
    return carried


def started(logger: logging.Logger, job: JobRecord, queue: str) -> None:
    """The "start" line."""
    if logger.isEnabledFor(logging.INFO):
        logger.info("start", extra=fields(job, queue))


def done(logger: logging.Logger, job: JobRecord, queue: str, attempt: Attempt) -> None:
    """The "done" line of a run that returned."""
    if logger.isEnabledFor(logging.INFO):
        logger.info("done", extra=fields(job, queue, attempt))


def failed(
    logger: logging.Logger,
    job: JobRecord,
    queue: str,
    attempt: Attempt,
    end: settlement.RunEnd,
    decided: settlement.Unsuccessful,
) -> None:
    """The "fail" line of an unsuccessful run whose outcome was written."""
    if not logger.isEnabledFor(logging.WARNING):
        return
    error = end.error.summary if isinstance(end, settlement.Raised) else ""
    logger.warning(
        "fail",
        extra={
            **fields(job, queue, attempt),
            "error": error,
            "reason": settlement.attempt_outcome(decided),
        },
    )


def expired(logger: logging.Logger, job: JobRecord, queue: str) -> None:
    """The line of a job dropped unrun, fetched past its expiry."""
    extra = {**fields(job, queue), "reason": "expired"}
    logger.warning("expired before it started; dropped", extra=extra)


def noted(logger: logging.Logger, job: JobRecord, note: failure.Note) -> None:
    """What the failure policy noted about a job's answer (an invalid retry_in, say)."""
    level = logging.ERROR if note.level == "error" else logging.WARNING
    logger.log(level, note.text, extra={"jid": job.jid, "class": job.class_name})


def end_despite(
    logger: logging.Logger, job: JobRecord, attempt: Attempt, error: BaseException
) -> settlement.RunEnd:
    """Gathering the run's end raised `error` (user code: a retry_in hook asked late, an
    exception's own __str__): a failure all the same, settled by the retry budget alone,
    never left on the in-progress list to run again uncounted at the next start."""
    logger.error(
        "settling the run raised %s; filed as a failure without asking retry_in",
        user_hooks.summary(error),
        exc_info=error,
        extra={"jid": job.jid, "class": job.class_name, "reason": "settle-error"},
    )
    return settlement.Raised(error=user_hooks.error_record(attempt.error or error))
