"""Unique jobs for the tests: each records its runs in the test's Redis.

Those a worker runs have an async variant (`AsyncReport`, ..., see
`tests.support.async_variants`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import cogworker
from tests.support.async_variants import Paced, register
from tests.support.topology import plain_client

config = cogworker.Config(
    concurrency=4, poll_interval=0.2, heartbeat_interval=0.3, shutdown_timeout=2.0
)


def record(event: str, jid: str) -> None:
    """RPUSH `event:jid:time` to `unique:events` in the test's Redis."""
    client = plain_client(os.environ["COGWORKER_TEST_REDIS_URL"])
    client.rpush("unique:events", f"{event}:{jid}:{time.time()}")
    client.close()


class Report(cogworker.Job, unique="until_executed"):
    """One report per account at a time."""

    def perform(self, account: int) -> None:
        """Record the run."""
        record("run", self.jid)


class Keyed(cogworker.Job, unique="until_executed"):
    """Unique by its own key: the first argument only."""

    @classmethod
    def unique_key(cls, args: list[Any]) -> str:
        """Only the account matters, not the note."""
        return str(args[0])

    def perform(self, account: int, note: str) -> None:
        """Record the run."""
        record("run", self.jid)


class SlowRetry(cogworker.Job, unique="until_executed", unique_for=1.0, retry=3):
    """Fails once, retried after 3 s: longer than its 1 s lock TTL."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Longer than the lock's TTL."""
        return 3.0

    def perform(self, marker: str) -> None:
        """Fail the first time."""
        record("run", self.jid)
        if not Path(marker).exists():
            Path(marker).touch()
            raise RuntimeError("first run fails")


class Ends(cogworker.Job, unique="until_executed", retry=5):
    """Ends for good at its first failure, as its argument says: dead, kill or discard."""

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, Any]) -> object:
        """KILL or DISCARD by argument; "dead" never gets here (retry=5 with... see perform)."""
        how = job["args"][0]
        return cogworker.KILL if how == "kill" else cogworker.DISCARD

    def perform(self, how: str) -> None:
        """Fail."""
        raise RuntimeError(how)


class DiesAtOnce(cogworker.Job, unique="until_executed", retry=False):
    """Fails with no retry: dead."""

    def perform(self, account: int) -> None:
        """Fail."""
        raise RuntimeError("dead")


class Starting(Paced, unique="until_executing"):
    """Waits for a file; its lock goes as soon as it starts."""

    def steps(self, gate: str) -> Generator[float, None, None]:
        """Wait (bounded) for the gate."""
        record("run", self.jid)
        deadline = time.monotonic() + 20
        while not Path(gate).exists() and time.monotonic() < deadline:
            yield 0.02


class Exclusive(Paced, unique="while_executing"):
    """Never two at once: each run takes 0.5 s and records its start and end."""

    def steps(self, account: int) -> Generator[float, None, None]:
        """Record start and end around a short wait."""
        record("start", self.jid)
        yield 0.5
        record("end", self.jid)


register(Report, SlowRetry, Ends, DiesAtOnce, Starting, Exclusive)
