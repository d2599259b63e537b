"""A tracked job's status, and how each event of its life moves it.

Everything that decides a status lives in this module; the shell writes
what `next_status` returns (through `settlement` when a run ends), with
the expiry.

    queued -> working -> complete
                      -> retrying -> working -> ...
                      -> dead | discarded
    (any waiting or running status) -> cancelled | expired

* `next_status` is total: any event from any status (or none: untracked,
  expired) gives a status, so a lost or reordered write never wedges it.
  Each event states the whole truth about where the job is, with one
  exception: a job put back on its queue while `retrying` (the retry poller,
  "retry now" on the dashboard) stays `retrying` until it starts, since it
  is still between attempts.  A dead job put back on its queue by hand is
  `queued` again: a terminal status ends a life cycle, not the jid.
* A killed job is `dead` (it is in the dead set); a discarded one `discarded`.
* A cancelled job (`Client.cancel`) is `cancelled`; one not started by its
  expiry is `expired`.  Both end its life cycle, like `complete`.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, assert_never, get_args

import attrs

from cogworker.domain.job import JobRecord

Status: TypeAlias = Literal[
    "queued", "working", "retrying", "complete", "dead", "discarded", "cancelled", "expired"
]
#: Every status, in the order of a job's life.
STATUSES: tuple[Status, ...] = get_args(Status)
#: The statuses that end a job's life cycle: nothing more happens unless it is enqueued again.
TERMINAL: frozenset[Status] = frozenset({"complete", "dead", "discarded", "cancelled", "expired"})
#: Seconds a status is kept after its last change, unless configured otherwise.
DEFAULT_EXPIRY = 30 * 60

#: How a failed attempt ended, as `settlement.attempt_outcome` says it.
FailedOutcome: TypeAlias = Literal["retrying", "dead", "killed", "discarded"]
#: Why a job ended neither done nor failed: cancelled, or not started by its expiry.
DropReason: TypeAlias = Literal["cancelled", "expired"]
#: How an attempt that didn't succeed ended, as the attempts log and run history say it.
AttemptOutcome: TypeAlias = FailedOutcome | DropReason


@attrs.frozen(kw_only=True)
class Enqueued:
    """The job was pushed onto its queue (by a client, a poller or by hand)."""


@attrs.frozen(kw_only=True)
class Started:
    """A worker began an attempt of the job."""


@attrs.frozen(kw_only=True)
class Succeeded:
    """The attempt's `perform` returned."""


@attrs.frozen(kw_only=True)
class Failed:
    """The attempt failed and was decided on: `outcome` is where the job went."""

    outcome: FailedOutcome


@attrs.frozen(kw_only=True)
class Dropped:
    """The job was cancelled or expired: it ends here, neither done nor failed."""

    reason: DropReason


Event: TypeAlias = Enqueued | Started | Succeeded | Failed | Dropped


def next_status(current: Status | None, event: Event) -> Status:
    """The status after `event`, for a job whose status is `current` (None: none recorded)."""
    match event:
        case Enqueued():
            return "retrying" if current == "retrying" else "queued"
        case Started():
            return "working"
        case Succeeded():
            return "complete"
        case Failed(outcome=outcome):
            return failed_status(outcome)
        case Dropped(reason=reason):
            return reason
        case _:
            assert_never(event)


def failed_status(outcome: FailedOutcome) -> Status:
    """The status a failed attempt leaves: a killed job is `dead`, like one out of retries."""
    match outcome:
        case "retrying":
            return "retrying"
        case "dead" | "killed":
            return "dead"
        case "discarded":
            return "discarded"
        case _:
            assert_never(outcome)


def is_tracked(job: JobRecord, track_all: bool) -> bool:
    """Whether `job`'s status is tracked: by configuration, or asked for at enqueue."""
    return track_all or job.extra.get("track_status") is True


def is_terminal(status: Status) -> bool:
    """Whether `status` ends the job's life cycle."""
    return status in TERMINAL


def status_of(text: str) -> Status | None:
    """`text` as a status (what the status hash holds), or None if it isn't one."""
    for status in STATUSES:
        if status == text:
            return status
    return None
