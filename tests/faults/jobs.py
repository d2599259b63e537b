"""Jobs and configs for the fault tests: every run is written down outside Redis.

The oracle is an append-only file (`COGWORKER_ORACLE`): one `start JID PID`
line when a run begins, one `end JID PID` when it finishes, each written
with a single O_APPEND write so lines from many processes never interleave.
It survives whatever the test does to Redis and to the workers.

Each job has an async variant (`AsyncSleep`, ..., see `tests.support.async_variants`).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Generator
from pathlib import Path

import attrs
import redis

import cogworker
from tests.support.async_variants import Paced, register
from tests.support.topology import plain_client

config = cogworker.Config(
    concurrency=4,
    poll_interval=0.2,
    heartbeat_interval=0.3,
    orphan_threshold=2.0,
    max_orphanings=2,
    shutdown_timeout=1.5,
    log_level="INFO",
)

#: Heartbeats far apart (still inside the threshold): after an outage, a reconciler
#: is back well before the other processes have beaten again.
slow_beat_config = attrs.evolve(config, heartbeat_interval=1.5, orphan_threshold=2.5)

_redis: redis.Redis | None = None


def side_effects() -> redis.Redis:
    """A client for the jobs' own side effects (the test's Redis)."""
    global _redis
    if _redis is None:
        _redis = plain_client(os.environ["COGWORKER_TEST_REDIS_URL"], socket_timeout=5)
    return _redis


def note(event: str, jid: str) -> None:
    """Append one oracle line."""
    line = f"{event} {jid} {os.getpid()}\n".encode()
    fd = os.open(os.environ["COGWORKER_ORACLE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


class Sleep(Paced):
    """Runs for `seconds`, then is done."""

    def steps(self, seconds: float) -> Generator[float, None, None]:
        """Wait, noting start and end."""
        note("start", self.jid)
        yield seconds
        note("end", self.jid)


class Count(cogworker.Job):
    """Does nothing but count itself in the oracle (and a Redis set, when Redis allows)."""

    def perform(self, number: int) -> None:
        """Note start and end around nothing."""
        note("start", self.jid)
        note("end", self.jid)


class KillsItsProcess(cogworker.Job):
    """Kills the worker process running it, every time."""

    def perform(self) -> None:
        """SIGKILL our own process."""
        note("start", self.jid)
        os.kill(os.getpid(), signal.SIGKILL)


class BurnsCpu(cogworker.Job):
    """Keeps a core busy in pure Python for `seconds`."""

    def perform(self, seconds: float) -> None:
        """Spin."""
        note("start", self.jid)
        deadline = time.monotonic() + seconds
        total = 0
        while time.monotonic() < deadline:
            total += sum(range(1000))
        note("end", self.jid)


class FailsAtGate(Paced, retry=5):
    """Waits until the gate file exists, then fails."""

    def steps(self, gate: str) -> Generator[float, None, None]:
        """Wait for the gate, then raise."""
        note("start", self.jid)
        while not Path(gate).exists():
            yield 0.02
        note("end", self.jid)
        raise RuntimeError("failed at the gate")


class DoneAtGate(Paced):
    """Waits until the gate file exists, then is done."""

    def steps(self, gate: str) -> Generator[float, None, None]:
        """Wait for the gate."""
        note("start", self.jid)
        while not Path(gate).exists():
            yield 0.02
        note("end", self.jid)


register(Sleep, Count, KillsItsProcess, BurnsCpu, FailsAtGate, DoneAtGate)
