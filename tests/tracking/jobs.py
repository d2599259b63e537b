"""Jobs and config for the tracking tests (status, history, attempts, live work, memory).

Each job has an async variant (`AsyncTracked`, ..., see `tests.support.async_variants`).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import cogworker
from tests.support.async_variants import Paced, register

config = cogworker.Config(
    concurrency=3,
    poll_interval=0.2,
    heartbeat_interval=0.2,
    orphan_threshold=1.5,
    shutdown_timeout=2.0,
)


class Tracked(cogworker.Job, track_status=True):
    """Succeeds; its status is tracked."""

    def perform(self, *args: Any) -> None:
        """Nothing to do."""


class TrackedFlaky(cogworker.Job, track_status=True, retry=3):
    """Fails its first run (a 0 s retry), then succeeds; tracked."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Retry on the next poll."""
        return 0

    def perform(self, marker: str) -> None:
        """Fail unless the marker file exists; create it on the first run."""
        if not Path(marker).exists():
            Path(marker).touch()
            raise RuntimeError("first run fails")


class Killed(cogworker.Job, track_status=True):
    """Its hook kills it at the first failure."""

    @classmethod
    def retry_in(cls, count: int) -> object:
        """End it now."""
        return cogworker.KILL

    def perform(self) -> None:
        """Fail."""
        raise ValueError("killed on purpose")


class Discarded(cogworker.Job, track_status=True):
    """Its hook discards it at the first failure."""

    @classmethod
    def retry_in(cls, count: int) -> object:
        """Drop it."""
        return cogworker.DISCARD

    def perform(self) -> None:
        """Fail."""
        raise ValueError("discarded on purpose")


class DiesAtOnce(cogworker.Job, retry=False):
    """Fails with no retry: straight to dead."""

    def perform(self) -> None:
        """Fail."""
        raise KeyError("no retry")


class WaitsForFile(Paced):
    """Runs until a file exists (to be seen running)."""

    def steps(self, path: str, note: str) -> Generator[float, None, None]:
        """Wait (bounded) for the file."""
        deadline = time.monotonic() + 30
        while not Path(path).exists() and time.monotonic() < deadline:
            yield 0.02


class TrackedWaitsForFile(WaitsForFile, track_status=True):
    """Runs until a file exists; tracked (to be seen working)."""


class KillsProcess(cogworker.Job):
    """Kills its own process (a crash mid-run)."""

    def perform(self) -> None:
        """SIGKILL ourselves."""
        os.kill(os.getpid(), signal.SIGKILL)


class TrackedUnique(cogworker.Job, track_status=True, unique="until_executed"):
    """Succeeds at once; tracked and unique (its push marks it queued)."""

    def perform(self, *args: Any) -> None:
        """Nothing to do."""


register(
    Tracked,
    TrackedFlaky,
    Killed,
    Discarded,
    DiesAtOnce,
    WaitsForFile,
    TrackedWaitsForFile,
    KillsProcess,
)
