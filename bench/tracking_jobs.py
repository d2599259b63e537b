"""Jobs for tracking_memory.py: tracked no-ops, and ones that fail once."""

from __future__ import annotations

import os
from pathlib import Path

import cogworker

config = cogworker.Config(concurrency=10, poll_interval=0.5, track_status=True)


class Tracked(cogworker.Job):
    """Does nothing."""

    def perform(self, number: int) -> None:
        """Nothing."""


class Flaky(cogworker.Job):
    """Fails its first run, retried at once."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Next poll."""
        return 0

    def perform(self, number: int) -> None:
        """Fail once (a marker file per job remembers)."""
        marker = Path(os.environ["COGWORKER_BENCH_MARKERS"]) / self.jid
        if not marker.exists():
            marker.touch()
            raise RuntimeError("first run fails")
