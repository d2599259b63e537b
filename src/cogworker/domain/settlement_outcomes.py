"""What is derived from a settlement: whether it ends the job, how its attempt ended,
what its log line says, and the result it keeps.

Pure, as `settlement` is.
"""

from __future__ import annotations

from typing import assert_never, cast

from cogworker.domain import results, status
from cogworker.domain.job import JobRecord
from cogworker.domain.settlement_records import (
    MAX_INTERRUPTS,
    Ack,
    Cancelled,
    Discarded,
    Expired,
    Failure,
    Settlement,
    ToDead,
    ToRetry,
    Unsuccessful,
)
from cogworker.domain.status import AttemptOutcome


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
