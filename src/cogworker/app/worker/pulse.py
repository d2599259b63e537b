"""The pulse: a companion process that keeps a worker's beat fresh while the worker lives.

A job in C code (a big regex, `sum(range(...))`, json on a huge document)
can hold the GIL past `orphan_threshold`; the heartbeat thread can't run
then, and another process would judge this one gone and run its jobs again.
The pulse has a GIL of its own: a fresh interpreter running
`pulse_beater.py`, which imports a few standard modules only (a fork of the
worker would share its pages at first, but keep copies of every page the
worker writes afterwards).  While the worker is alive and not stopped (a
frozen, SIGSTOPped worker must still be judged gone), it looks every half
`heartbeat_interval` and stamps the worker's beat if the heartbeat is late
(see `lua/pulse.lua`): while the heartbeat is on time the beats are all
its own.  It ends when the worker closes the pulse's stdin (a clean stop)
or dies.

It also enforces the hard time limits the watchdog can't: the watchdog is
a thread of the worker, frozen with it while a job holds the GIL in C code
(a C extension, a catastrophic regex).  Each run with a limit is told to
the pulse as it starts (`RunWatch`: a line on its stdin, only for runs
with a limit) and as its outcome is claimed.  A run still told
`FROZEN_AFTER` seconds past its hard deadline (limit plus grace) means
the watchdog could not act: the pulse kills the worker (SIGKILL), marks
that run as timed out (`run_marks`), and ends.  The worker's other jobs are
recovered as after any kill -9, and the recovery files the marked run as
timed out "hard" (`marked_ends`), so it is never acknowledged.
"""

from __future__ import annotations

import logging
import marshal
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.run_marks import MARK_TTL, hard_timeout_value
from cogworker.adapters.liveness import connection_settings, presence_ttl, pulse_eval
from cogworker.adapters.redis_client import SOCKET_TIMEOUT
from cogworker.adapters.redis_target import RedisTarget
from cogworker.app.config import Config
from cogworker.app.worker.state import RunningJob

BEATER = Path(__file__).with_name("pulse_beater.py")
#: How long past a run's hard deadline the watchdog has to claim it before the pulse
#: judges the worker frozen: several watchdog looks, on a busy machine.
FROZEN_AFTER = 2.0


@attrs.define
class Pulse:
    """The running companion of this process, seen from the worker."""

    process: subprocess.Popen[bytes]
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def tell(self, line: bytes) -> None:
        """Send the pulse one line (a run to watch, or to forget)."""
        assert self.process.stdin is not None
        with self._lock:
            try:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            except (OSError, ValueError):
                pass  # it is gone (said in the log by the heartbeat's lateness) or stopped

    def stop(self) -> None:
        """End the pulse (its stdin closes; it ends once a beat in flight is done) and reap it."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(SOCKET_TIMEOUT + 1.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@attrs.define
class RunWatch:
    """Tells the pulse the hard deadline of each run with a limit, and when its outcome is
    claimed (by its runner, or the watchdog filing it): a frozen worker tells nothing."""

    pulse: Pulse
    grace: float
    #: The clock the runs' start times are on (the processor's).
    clock: Callable[[], float]
    _watched: set[str] = attrs.field(factory=set)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def watch(self, work: RunningJob) -> None:
        """Watch `work` (a run with a limit, just started)."""
        assert work.timeout is not None
        left = work.run_at + work.timeout + self.grace - self.clock()
        mark = hard_timeout_value(work.run_at, work.timeout, self.grace)
        key = keys.hard_timeout_mark(work.queue, work.jid)
        with self._lock:
            self._watched.add(work.jid)
        self.pulse.tell(f"+ {work.jid} {left!r} {mark} {key}\n".encode())

    def forget(self, jid: str) -> None:
        """Stop watching `jid`'s run (its outcome is claimed, or it ended): once."""
        with self._lock:
            if jid not in self._watched:
                return
            self._watched.discard(jid)
        self.pulse.tell(f"- {jid}\n".encode())


def start(
    config: Config, target: RedisTarget, identity: str, logger: logging.Logger
) -> Pulse | None:
    """Start the pulse for this process (`identity`) on `target`; None, said in the log,
    if it can't be."""
    message = settings_message(config, target, identity)
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(BEATER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
    except OSError as error:
        _not_started(logger, error)
        return None
    try:
        assert process.stdin is not None
        process.stdin.write(message)
        process.stdin.flush()
    except OSError as error:  # it died at once: reap it
        process.wait()
        _not_started(logger, error)
        return None
    return Pulse(process)


def settings_message(config: Config, target: RedisTarget, identity: str) -> bytes:
    """What the beater reads on its stdin: a line with the size, then its settings
    marshalled (it reads no json: that would load re and enum there)."""
    settings = connection_settings(target)
    settings |= {
        "pid": os.getpid(),
        "interval": config.heartbeat_interval / 2,
        "frozen_after": FROZEN_AFTER,
        "mark_ttl": MARK_TTL,
        "json": config.log_format == "json",
        "eval": pulse_eval(
            identity,
            ttl=presence_ttl(config.orphan_threshold),
            stale_after=late_after(config),
        ),
    }
    encoded = marshal.dumps(settings)
    return b"%d\n" % len(encoded) + encoded


def late_after(config: Config) -> float:
    """How old a beat is when the heartbeat counts as late: half an interval past due,
    and never more than half-way to the orphan threshold."""
    halfway = (config.heartbeat_interval + config.orphan_threshold) / 2
    return min(1.5 * config.heartbeat_interval, halfway)


def _not_started(logger: logging.Logger, error: OSError) -> None:
    logger.error(
        "no liveness pulse (%s): a job holding the GIL past orphan_threshold could make "
        "this process look gone",
        error,
    )
