"""`cogworker work APP --processes N`: one command, N worker processes, kept running.

The supervisor runs no jobs and never talks to Redis.  Each child is a plain
`cogworker work` process (the same command line minus the supervisor's own
options), so it has its own identity, threads and signal handling, exactly
as if started by hand.  What users see (restarts and their back-off,
`--max-memory` recycling, signals, the kill of a hung child, the children's
death signal) is in docs/guide.md, "Several processes from one command";
the reasons for its less obvious parts are here:

* a child that exits with `HARD_TIMEOUT_EXIT` (a job stuck past its time
  limit, filed as failed) is replaced at once, as a recycled one is: its
  exit is the cure, not a crash to back off from;
* children run in process groups of their own, so a Ctrl-C at a terminal
  reaches the supervisor only and each child gets one stop per request;
* a child started after a SIGTSTP starts `--paused`: a restart must not take
  jobs while the fleet is quiet (a Resume from the dashboard is not seen
  here, where Redis isn't read);
* a child still there `kill_after` seconds after its SIGTERM is hung (a
  worker's stop is bounded) and is killed; its unfinished jobs stay on its
  in-progress list for the other workers to recover as orphans.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence

import attrs

from cogworker.adapters.process_memory import rss_kib
from cogworker.app.child_processes import describe_exit, load_prctl, prepare_child
from cogworker.app.signal_pipe import drain, signals_to_pipe
from cogworker.app.worker.stopping import HARD_TIMEOUT_EXIT
from cogworker.domain.supervision import restart_delay, to_recycle

#: Seconds between two readings of the children's memory (with --max-memory).
MEMORY_CHECK_INTERVAL = 2.0
#: The longest the loop sleeps with nothing due: a safety net, as every
#: awaited event (a signal, a child's exit) wakes it at once.
IDLE_WAKEUP = 1.0
#: The signals the supervisor acts on.  SIGCHLD only wakes the loop up.
HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGTSTP, signal.SIGCHLD)
#: The signals that stop the supervisor and its children (see `stopping` in the worker).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

#: Seconds beyond a child's shutdown_timeout before a SIGTERMed child is killed: its
#: fetcher, acker and housekeeping threads get a few seconds each to end, then it
#: writes its hand-over (retried for a while if Redis is away).
STOP_GRACE = 15.0


@attrs.define
class _Slot:
    """One of the N places for a child: the child in it, or when the next one is due."""

    index: int
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    recycling: bool = False
    #: The delay before this slot's latest restart (None before any): the backoff's state.
    delay: float | None = None
    #: When (monotonic) a new child is due in this empty slot; None: none is due.
    due_at: float | None = None
    #: When (monotonic) the child was sent SIGTERM; None: it wasn't (or was killed since).
    terminated_at: float | None = None


class Supervisor:
    """Keeps `processes` children of `command` running until told to stop.

    `command` is the child's full argv, `environment` its environment (None: this
    process's).  `max_memory_mib`, if given, is the RSS above which a child is recycled;
    `kill_after`, the seconds a child may take to exit after SIGTERM before it is killed.
    `run()` blocks until every child has exited after a stop signal (main thread only).
    """

    def __init__(
        self,
        command: Sequence[str],
        processes: int,
        *,
        max_memory_mib: int | None = None,
        kill_after: float,
        logger: logging.Logger | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        self.command = list(command)
        self.environment = None if environment is None else dict(environment)
        self.max_memory_mib = max_memory_mib
        self.kill_after = kill_after
        self.logger = logger or logging.getLogger("cogworker")
        self.stopping = False
        #: Told SIGTSTP: children started from now on start quiet.
        self.quiet = False
        self._slots = [_Slot(index) for index in range(processes)]
        self._prctl = load_prctl()
        self._pid = os.getpid()
        self._next_memory_check = 0.0

    def run(self) -> None:
        """Start the children and supervise them until a stop signal; return once all exited."""
        with signals_to_pipe(HANDLED_SIGNALS) as wakeup:
            self.logger.info(
                "supervisor %d: starting %d worker process%s%s",
                os.getpid(),
                len(self._slots),
                "" if len(self._slots) == 1 else "es",
                f", recycling any above {self.max_memory_mib} MiB" if self.max_memory_mib else "",
            )
            now = time.monotonic()
            for slot in self._slots:
                self._start(slot, now)
            self._next_memory_check = now + MEMORY_CHECK_INTERVAL
            while True:
                for signum in drain(wakeup):
                    self._on_signal(signum)
                now = time.monotonic()
                self._reap(now)
                if self.stopping and not self._live():
                    break
                self._start_due(now)
                self._check_memory(now)
                self._kill_overdue(now)
                select.select([wakeup], [], [], self._timeout(time.monotonic()))
        self.logger.info("supervisor %d: all worker processes have exited", os.getpid())

    # --- signals ---------------------------------------------------------------

    def _on_signal(self, signum: int) -> None:
        if signum in STOP_SIGNALS:
            self.logger.info(
                "supervisor: %s, stopping %d worker processes%s",
                signal.Signals(signum).name,
                len(self._live()),
                " now (their running jobs go back unfinished)" if self.stopping else "",
            )
            self.stopping = True
            now = time.monotonic()
            for slot in self._slots:
                slot.due_at = None  # no restarts during shutdown
                self._terminate(slot, now)
        elif signum == signal.SIGTSTP:
            self.logger.info("supervisor: SIGTSTP, quieting %d worker processes", len(self._live()))
            self.quiet = True
            self._send_all(signal.SIGTSTP)

    def _send_all(self, signum: signal.Signals) -> None:
        for slot in self._slots:
            self._send(slot, signum)

    def _terminate(self, slot: _Slot, now: float) -> None:
        """SIGTERM (a graceful stop), the first one's time noted for `_kill_overdue`."""
        if slot.process is not None:
            if slot.terminated_at is None:
                slot.terminated_at = now
            self._send(slot, signal.SIGTERM)

    def _kill_overdue(self, now: float) -> None:
        """SIGKILL each child still there `kill_after` seconds after its first SIGTERM."""
        for slot in self._live():
            if slot.process is None or slot.terminated_at is None:
                continue
            if now - slot.terminated_at < self.kill_after:
                continue
            self.logger.error(
                "supervisor: worker process %d still running %.0fs after SIGTERM: killed "
                "(SIGKILL); the other workers recover its unfinished jobs as orphans",
                slot.process.pid,
                now - slot.terminated_at,
            )
            slot.terminated_at = None
            self._send(slot, signal.SIGKILL)

    @staticmethod
    def _send(slot: _Slot, signum: signal.Signals) -> None:
        if slot.process is not None:
            # Popen.send_signal does nothing once the child is reaped, so a
            # reused pid is never signalled.
            with contextlib.suppress(ProcessLookupError):
                slot.process.send_signal(signum)

    # --- children --------------------------------------------------------------

    def _live(self) -> list[_Slot]:
        return [slot for slot in self._slots if slot.process is not None]

    def _start(self, slot: _Slot, now: float) -> None:
        slot.due_at = None
        slot.recycling = False
        slot.terminated_at = None
        paused = self.quiet and not {"--paused", "--quiet"} & set(self.command)
        quiet = ["--paused"] if paused else []
        try:
            slot.process = subprocess.Popen(
                [*self.command, *quiet],
                stdin=subprocess.DEVNULL,
                env=self.environment,
                # Only between fork and exec; the supervisor has no other threads.
                preexec_fn=self._prepare_child,
            )
        except OSError as error:
            self.logger.error("supervisor: couldn't start a worker process: %s", error)
            self._schedule_restart(slot, now, uptime=0.0)
            return
        slot.started_at = now
        self.logger.info("supervisor: worker process %d started", slot.process.pid)

    def _prepare_child(self) -> None:
        """Runs in the child between fork and exec."""
        prepare_child(self._prctl, self._pid)

    def _reap(self, now: float) -> None:
        for slot in self._slots:
            returncode = None if slot.process is None else slot.process.poll()
            if slot.process is None or returncode is None:
                continue
            pid, uptime = slot.process.pid, now - slot.started_at
            slot.process = None
            how = describe_exit(returncode)
            if self.stopping:
                self.logger.info("supervisor: worker process %d exited (%s)", pid, how)
            elif slot.recycling:
                self.logger.info("supervisor: worker process %d recycled (%s)", pid, how)
                slot.due_at = now  # a planned stop: no backoff
            elif returncode == HARD_TIMEOUT_EXIT:
                self.logger.warning(
                    "supervisor: worker process %d exited after a job stuck past its time "
                    "limit (%s); starting a fresh one",
                    pid,
                    how,
                )
                slot.due_at = now  # it ran fine until a job got stuck: no backoff
            else:
                delay = self._schedule_restart(slot, now, uptime)
                self.logger.warning(
                    "supervisor: worker process %d exited (%s) after %.1fs; restarting in %.0fs",
                    pid,
                    how,
                    uptime,
                    delay,
                )

    def _schedule_restart(self, slot: _Slot, now: float, uptime: float) -> float:
        slot.delay = restart_delay(slot.delay, uptime)
        slot.due_at = now + slot.delay
        return slot.delay

    def _start_due(self, now: float) -> None:
        if self.stopping:
            return
        for slot in self._slots:
            if slot.process is None and slot.due_at is not None and slot.due_at <= now:
                self._start(slot, now)

    def _check_memory(self, now: float) -> None:
        if self.max_memory_mib is None or self.stopping or now < self._next_memory_check:
            return
        self._next_memory_check = now + MEMORY_CHECK_INTERVAL
        # A child gets a full interval before its first reading: a SIGTERM
        # before its handler is installed would kill it outright rather than
        # have it drain, and a limit below a fresh worker's size would
        # otherwise recycle children faster than they can start.
        running = {
            slot.process.pid: slot
            for slot in self._slots
            if slot.process is not None and now - slot.started_at >= MEMORY_CHECK_INTERVAL
        }
        readings = {pid: rss_kib(pid) for pid in running}
        stopping = [pid for pid, slot in running.items() if slot.recycling]
        for pid in to_recycle(readings, self.max_memory_mib * 1024, stopping):
            slot = running[pid]
            self.logger.warning(
                "supervisor: worker process %d uses %d MiB, above --max-memory %d MiB: "
                "recycling it (SIGTERM, it drains, then a new one starts)",
                pid,
                (readings[pid] or 0) // 1024,
                self.max_memory_mib,
            )
            slot.recycling = True
            self._terminate(slot, now)

    def _timeout(self, now: float) -> float:
        """Seconds until the loop has something to do unprompted (a restart, a memory check,
        a kill)."""
        due = [slot.due_at for slot in self._slots if slot.due_at is not None]
        due += [
            slot.terminated_at + self.kill_after
            for slot in self._live()
            if slot.terminated_at is not None
        ]
        if self.max_memory_mib is not None:
            due.append(self._next_memory_check)
        return max(0.0, min([now + IDLE_WAKEUP, *due]) - now)
