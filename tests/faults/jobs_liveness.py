"""Jobs and the config of the liveness fault tests: the GIL held in C code, streams closed.

Runs are written down in the oracle file, as in `tests.faults.jobs`.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

import attrs

import cogworker
from tests.faults.jobs import Sleep, note

#: Beats five times a second; gone after a second without one; a long drain.
config = cogworker.Config(
    concurrency=2,
    poll_interval=0.2,
    heartbeat_interval=0.2,
    orphan_threshold=1.0,
    max_orphanings=2,
    shutdown_timeout=60.0,
    log_level="INFO",
)
#: The same with a short drain, for a stop that leaves a job running.
short_drain_config = attrs.evolve(config, shutdown_timeout=1.0)

#: Elements summed to time the interpreter's speed before a hold.
PROBE = 2_000_000


class HoldsGil(cogworker.Job):
    """Holds the GIL in C code for about `seconds` (`sum` over a `range` never lets go)."""

    def perform(self, seconds: float) -> None:
        """Time a short sum, then sum a range sized to last `seconds`."""
        started = time.perf_counter()
        sum(range(PROBE))
        per_element = (time.perf_counter() - started) / PROBE
        note("start", self.jid)
        sum(range(int(seconds / per_element)))
        note("end", self.jid)


class ClosesStderr(cogworker.Job):
    """Closes `sys.stderr`, as a careless job might."""

    def perform(self) -> None:
        """Close it and note the run."""
        note("start", self.jid)
        sys.stderr.close()
        note("end", self.jid)


class ClosesFd2(cogworker.Job):
    """Closes file descriptor 2: the next socket opened takes its number."""

    def perform(self) -> None:
        """Close it and note the run."""
        note("start", self.jid)
        os.close(2)
        note("end", self.jid)


class SleepsWith(Sleep):
    """Sleeps `seconds`; `data` only rides along (nested deep, say)."""

    def perform(self, seconds: float, data: object = None) -> None:
        """Sleep, noting start and end."""
        super().perform(seconds)


class EndsAThread(cogworker.Job):
    """Raises SystemExit in the worker's thread named `name` (as a stray library call could)."""

    def perform(self, name: str) -> None:
        """Find the thread and make its next bytecode raise."""
        note("start", self.jid)
        [target] = [thread for thread in threading.enumerate() if thread.name == name]
        assert target.ident is not None
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(target.ident), ctypes.py_object(SystemExit)
        )
        note("end", self.jid)
