"""`Client.cancel`: end a job wherever it is, and say what happened.

A waiting job (queued, scheduled, waiting to retry) is taken off and ended
as cancelled in one script; a job a process holds is told to stop through
that process's signal list (its heartbeat picks it up and raises
`JobCancelledError` into the run, or cancels its task), and the cancel is
marked on the run: should the process die before the signal reaches it,
the recovery of its run ends it as cancelled instead of running it again.  A waiting job a
worker fetches between the search and the script is looked for again, as
held.  A cancel that races the run's own end writes nothing of its own:
the run's settlement is the one outcome.
"""

from __future__ import annotations

import enum

from cogworker.adapters.jobs.cancel import CancelStore
from cogworker.adapters.jobs.outcome import outcome_record
from cogworker.domain import settlement

#: Searches for a job that moves between them (fetched as it is cancelled).
LOOKS = 3


class CancelResult(enum.Enum):
    """What a cancel did."""

    #: It was waiting (queued, scheduled, retry): taken off and ended as cancelled.
    REMOVED = "removed"
    #: A process holds it: told to cancel it (it ends as cancelled unless it ends first).
    SIGNALLED = "signalled"
    #: No such job was found (never enqueued, or its records have expired).
    NOT_FOUND = "not found"
    #: It has already ended (done, dead, discarded, cancelled, expired).
    ALREADY_FINISHED = "already finished"


def cancel(store: CancelStore, keeping: settlement.Keeping, jid: str, now: float) -> CancelResult:
    """Cancel `jid` (see the module's docstring)."""
    for _ in range(LOOKS):
        waiting = store.waiting(jid)
        if waiting is not None:
            decided = settlement.cancel_waiting(waiting.job, keeping, now=now)
            if store.remove(waiting, outcome_record(decided), now):
                return CancelResult.REMOVED
            continue  # fetched, or moved by the poller, meanwhile: look again
        held = store.holder(jid)
        if held is not None:
            store.signal(*held, jid)
            return CancelResult.SIGNALLED
        if store.finished(jid):
            return CancelResult.ALREADY_FINISHED
    return CancelResult.NOT_FOUND
