"""Job classes for the time-limit, cancellation and expiry fault tests (noting runs in the
oracle, see `tests.faults.jobs`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import cogworker
from tests.faults.jobs import note, side_effects


class TrackedCount(cogworker.Job, track_status=True, unique="until_executed"):
    """Does nothing but count itself; its status is tracked and it holds a unique lock."""

    def perform(self, number: int) -> None:
        """Note start and end around nothing."""
        note("start", self.jid)
        note("end", self.jid)


class TrackedQuick(cogworker.Job, track_status=True):
    """Does nothing but count itself; its status is tracked."""

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


class LoopsUntilCancelled(cogworker.Job, track_status=True, unique="until_executed"):
    """Loops in pure Python (short sleeps) until its gate opens or a cancel stops it; notes
    `end` if it returns, and whether it saw `self.cancelled` (Redis key `saw-cancelled`)."""

    def perform(self, gate: str) -> None:
        """Spin on the gate file."""
        note("start", self.jid)
        try:
            while not Path(gate).exists():
                time.sleep(0.01)
        finally:
            if self.cancelled:
                side_effects().set("saw-cancelled", self.jid)
        note("end", self.jid)


class AsyncAwaitsForever(cogworker.Job, track_status=True):
    """Awaits until cancelled."""

    async def perform(self) -> None:
        """Sleep on the loop for an hour."""
        note("start", self.jid)
        await asyncio.sleep(3600)
        note("end", self.jid)
