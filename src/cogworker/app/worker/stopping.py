"""When a worker process stops, and how hard: asked once, asked again, a thread died, or
a job stuck past its time limit was filed for it (see `watchdog`).

Stop signals are SIGTERM, SIGINT and SIGHUP.  HUP is a graceful stop like
TERM: it says the terminal or the session that ran the worker is gone, and
a worker left running without it would write its log into the void; a
process manager restarts a stopped worker.  A second stop request during
the drain hurries it: the running jobs go back to their queues at once.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Collection

import attrs

#: The exit status of a process stopped because one of its threads died.
THREAD_DIED_EXIT = 70  # EX_SOFTWARE
#: The exit status of a process stopped because a job of its was stuck past its time
#: limit and grace (its thread can't be freed): start a fresh one.
HARD_TIMEOUT_EXIT = 75  # EX_TEMPFAIL
#: The exit status of a setting that can't work (click's, for usage errors).
SETTING_EXIT = 2
#: How often the drain looks whether the running jobs have ended.
DRAIN_POLL = 0.05
#: The signals that stop a worker.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


@attrs.define
class StopControl:
    """The stop requests of one worker process, and the watch over its threads."""

    logger: logging.Logger
    identity: str
    #: Set from the process's `stopping` flag: a thread ending after it is fine.
    stopping: threading.Event
    requested: threading.Event = attrs.field(factory=threading.Event)
    #: A second request: running jobs go back now rather than after the drain.
    hurry: threading.Event = attrs.field(factory=threading.Event)
    #: The thread whose death stopped the process, if one did.
    died: str | None = None
    #: The job whose hard timeout stopped the process, if one did.
    timed_out: str | None = None

    def request(self) -> None:
        """Ask for a stop; asked again, hurry it."""
        if self.requested.is_set():
            self.hurry.set()
        self.requested.set()

    def install(self, on_stop: Callable[[], None], on_quiet: Callable[[], None]) -> None:
        """Route the stop signals to `on_stop` and SIGTSTP to `on_quiet` (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in STOP_SIGNALS:
            signal.signal(signum, lambda *_: on_stop())
        signal.signal(signal.SIGTSTP, lambda *_: on_quiet())

    def hard_timeout(self, jid: str) -> None:
        """Stop the process, a stuck job of its filed as timed out; it exits to be replaced."""
        if self.timed_out is None:
            self.logger.critical(
                "job %s stuck past its time limit: stopping this process (it exits with "
                "status %d, to be replaced)",
                jid,
                HARD_TIMEOUT_EXIT,
                extra={"identity": self.identity, "reason": "hard-timeout"},
            )
        self.timed_out = self.timed_out or jid
        self.requested.set()

    def exit_status(self) -> int | None:
        """The status the process exits with once stopped: None for a plain stop."""
        if self.died is not None:
            return THREAD_DIED_EXIT
        if self.timed_out is not None:
            return HARD_TIMEOUT_EXIT
        return None

    def watched(self, name: str, target: Callable[[], None]) -> Callable[[], None]:
        """`target`, then a stop of the process if it ended before the process was stopping."""

        def run() -> None:
            try:
                target()
            except BaseException:
                self.logger.exception("thread %s died", name, extra={"identity": self.identity})
            if not self.stopping.is_set():
                self._thread_ended(name)

        return run

    def _thread_ended(self, name: str) -> None:
        self.logger.critical(
            "thread %s ended: stopping this process (it exits with status %d, to be replaced)",
            name,
            THREAD_DIED_EXIT,
            extra={"identity": self.identity, "reason": "thread-died"},
        )
        self.died = name
        self.requested.set()

    def drain(
        self,
        processors: list[threading.Thread],
        timeout: float,
        on_loop: Callable[[], int] = lambda: 0,
        abandoned: Callable[[], Collection[str]] = frozenset,
    ) -> int:
        """Wait up to `timeout` for the running jobs (the processors' and the `on_loop()`
        async ones), or until hurried; how many still run.  The `abandoned()` threads
        (stuck in a job timed out and filed for them) aren't waited for."""
        deadline = time.monotonic() + timeout

        def unfinished_now() -> int:
            stuck = abandoned()
            alive = sum(thread.is_alive() and thread.name not in stuck for thread in processors)
            return alive + on_loop()

        while unfinished_now():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.hurry.wait(min(remaining, DRAIN_POLL)):
                break
        unfinished = unfinished_now()
        if self.hurry.is_set() and unfinished:
            self.logger.warning(
                "stopping now (second stop signal): %d running jobs go back unfinished",
                unfinished,
                extra={"identity": self.identity, "reason": "hurried-stop"},
            )
        return unfinished
