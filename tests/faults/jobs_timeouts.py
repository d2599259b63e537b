"""Job classes for the time-limit fault tests (noting runs in the oracle, see
`tests.faults.jobs`): loops in Python past a limit, stuck in C past limit and grace."""

from __future__ import annotations

import contextlib
import ctypes
import socket
import time
from collections.abc import Generator
from pathlib import Path

import attrs

import cogworker
from tests.faults.jobs import config as base_config
from tests.faults.jobs import note, side_effects
from tests.support.async_variants import Paced, register

#: Limits of half a second or so, a short grace.
config = attrs.evolve(base_config, timeout_grace=1.0, async_concurrency=20)


def first_run(jid: str) -> bool:
    """Whether this is `jid`'s first run (counted in Redis)."""
    return int(side_effects().incr(f"runs:{jid}")) == 1


class RetriedSoon(cogworker.Job):
    """Its `retry_in` notes what it was handed (Redis list `retry-in-saw`), and retries soon."""

    @classmethod
    def retry_in(cls, count: int, exception: BaseException) -> float:
        """Note the error's class; retry in 0.1 s."""
        side_effects().rpush("retry-in-saw", type(exception).__name__)
        return 0.1


class LoopsPastLimitOnce(Paced, RetriedSoon, track_status=True, timeout=0.5):
    """Its first run loops in Python (short pauses) until its limit stops it; its retry
    returns."""

    def steps(self) -> Generator[float, None, None]:
        """Loop on the first run, return on the next."""
        note("start", self.jid)
        if first_run(self.jid):
            while True:
                yield 0.01
        note("end", self.jid)


class KilledAtLimit(Paced, track_status=True, timeout=0.3):
    """Loops in Python; its `retry_in` kills it when its limit ends it, and its death hook
    notes the error (Redis list `died-of`)."""

    def steps(self) -> Generator[float, None, None]:
        """Loop until stopped."""
        note("start", self.jid)
        while True:
            yield 0.01

    @classmethod
    def retry_in(cls, count: int, exception: BaseException) -> object:
        """No retry for a run that hit its limit."""
        return cogworker.KILL if isinstance(exception, cogworker.JobTimeoutError) else None

    @classmethod
    def retries_exhausted(cls, job: dict[str, object], exception: BaseException) -> None:
        """Note what it died of."""
        side_effects().rpush("died-of", type(exception).__name__)


class StuckOnce(RetriedSoon, track_status=True, timeout=0.5):
    """Its first run blocks in C code (`block`), out of reach of its limit's exception."""

    def perform(self) -> None:
        """Block on the first run, return on the next."""
        note("start", self.jid)
        if first_run(self.jid):
            self.block()
        note("end", self.jid)

    def block(self) -> None:
        """Block for good."""
        raise NotImplementedError


class SleepsInCOnce(StuckOnce):
    """Sleeps for an hour in C (no bytecode to raise the timeout at)."""

    def block(self) -> None:
        """An hour's sleep."""
        time.sleep(3600)


class ReadsSocketOnce(StuckOnce):
    """Blocks reading a socket nobody writes to."""

    def block(self) -> None:
        """A read that never returns."""
        reader, _writer = socket.socketpair()
        reader.recv(1)


#: How long `FreezesInCOnce` holds the GIL: far past its limit and grace, and past the
#: pulse's judging it frozen.
FREEZE_SECONDS = 20


class FreezesInCOnce(StuckOnce):
    """Sleeps in libc's `sleep()` called through `ctypes.PyDLL`, which keeps the GIL (as a
    C extension or a catastrophic regex does): its whole process freezes, the watchdog
    thread with it."""

    def block(self) -> None:
        """Hold the GIL for FREEZE_SECONDS."""
        ctypes.PyDLL(None).sleep(FREEZE_SECONDS)


class StuckAfterGate(RetriedSoon, track_status=True, timeout=0.5):
    """Its first run waits for its gate file (ignoring its limit's exception), then sleeps
    in C; its retry returns."""

    def perform(self, gate: str) -> None:
        """Count the run, wait for the gate, then block on the first run."""
        note("start", self.jid)
        first = first_run(self.jid)
        while first and not Path(gate).exists():
            with contextlib.suppress(cogworker.JobTimeoutError):
                time.sleep(0.01)
        if first:
            time.sleep(3600)
        note("end", self.jid)


#: A limit of 1 s and a grace of 0.5 s: the hard deadline comes 1.5 s into a run.
settling_config = attrs.evolve(config, timeout_grace=0.5)
#: How long `EndsNearItsHardLimit` pauses Redis's writes.
PAUSE_MS = 2500


class EndsNearItsHardLimit(cogworker.Job, track_status=True, timeout=1.0, retry=0):
    """Ignores its limit's `JobTimeoutError` (in Python: the watchdog's filing at the hard
    deadline is what ends it), pauses every write to Redis for PAUSE_MS (`CLIENT PAUSE
    WRITE`) `pause_at` seconds into its run, and ends at `end_at`: raising if `raises`,
    else returning.  Never retried: a run that fails is dead."""

    def perform(self, pause_at: float, end_at: float, raises: bool) -> None:
        """Wait for `end_at`, pausing the writes on the way; then end."""
        note("start", self.jid)
        began, paused = time.monotonic(), False
        while True:
            try:
                elapsed = time.monotonic() - began
                if not paused and elapsed >= pause_at:
                    side_effects().execute_command("CLIENT", "PAUSE", PAUSE_MS, "WRITE")
                    paused = True
                if elapsed >= end_at:
                    break
                time.sleep(0.002)
            except cogworker.JobTimeoutError:
                continue
        note("end", self.jid)
        if raises:
            raise RuntimeError("ends by raising, as its writes are paused")


class Naps(Paced, track_status=True):
    """Naps `seconds` in short pauses, then ends; a limit (a subclass's) may stop it first."""

    def steps(self, seconds: float) -> Generator[float, None, None]:
        """Pause until `seconds` have passed."""
        note("start", self.jid)
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            yield 0.01
        note("end", self.jid)

    @classmethod
    def retry_in(cls, count: int, exception: BaseException) -> float:
        """Retry soon."""
        return 0.1


class NapsWithin(Naps, retry=1, timeout=0.15):
    """`Naps` with a 0.15 s limit, retried once."""


class NapsWithinLonger(Naps, retry=1, timeout=0.3):
    """`Naps` with a 0.3 s limit, retried once."""


class NapsWithinAndDies(Naps, retry=0, timeout=0.1):
    """`Naps` with a 0.1 s limit, never retried: past it, dead."""


register(
    LoopsPastLimitOnce,
    KilledAtLimit,
    SleepsInCOnce,
    FreezesInCOnce,
    EndsNearItsHardLimit,
    Naps,
    NapsWithin,
    NapsWithinLonger,
    NapsWithinAndDies,
)
