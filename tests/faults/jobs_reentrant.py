"""A `while_executing` job for the fault test of issue 16 #9 (its lock is re-entrant)."""

from __future__ import annotations

import time

import cogworker
from tests.faults.jobs import note


class ExclusiveSleep(cogworker.Job, unique="while_executing"):
    """Never two at once; sleeps `seconds`, noting start and end in the oracle."""

    def perform(self, seconds: float) -> None:
        """Sleep, noting start and end."""
        note("start", self.jid)
        time.sleep(seconds)
        note("end", self.jid)
