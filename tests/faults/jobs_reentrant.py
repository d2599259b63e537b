"""A `while_executing` job for the fault test of issue 16 #9 (its lock is re-entrant)."""

from __future__ import annotations

import time
from pathlib import Path

import cogworker
from tests.faults.jobs import note


class ExclusiveAtGate(cogworker.Job, unique="while_executing"):
    """Never two at once; waits until the gate file exists, noting start and end in the
    oracle."""

    def perform(self, gate: str) -> None:
        """Wait for the gate (a minute at most), noting start and end."""
        note("start", self.jid)
        deadline = time.monotonic() + 60
        while not Path(gate).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        note("end", self.jid)
