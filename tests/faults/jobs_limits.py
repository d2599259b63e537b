"""Job classes for the time-limit, cancellation and expiry fault tests (noting runs in the
oracle, see `tests.faults.jobs`)."""

from __future__ import annotations

import cogworker
from tests.faults.jobs import note


class TrackedCount(cogworker.Job, track_status=True, unique="until_executed"):
    """Does nothing but count itself; its status is tracked and it holds a unique lock."""

    def perform(self, number: int) -> None:
        """Note start and end around nothing."""
        note("start", self.jid)
        note("end", self.jid)


class FailsLateRetry(cogworker.Job, track_status=True, expires_in=60):
    """Fails every time; its `retry_in` asks for a retry 120 s away, past its 60 s expiry."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise RuntimeError("fails; retried too late")

    @classmethod
    def retry_in(cls, count: int, exception: BaseException) -> float:
        """Past the expiry: the settlement drops it as expired instead."""
        return 120.0
