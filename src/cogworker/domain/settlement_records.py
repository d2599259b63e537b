"""The records a settlement is made of: how a run ended, what the worker keeps, the
settlement variants with their effects, and the bounds on interrupted writes.

`settlement.settle` decides which variant a run's end is; callers import these
records from `settlement`, the decision's one public place.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import attrs

from cogworker.domain import failure, results, status
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.deadlines import TimedOut
from cogworker.domain.job import ErrorRecord, JobRecord
from cogworker.domain.locks import LockEffect
from cogworker.domain.records import AttemptRecord, RunRecord

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
