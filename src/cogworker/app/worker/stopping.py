"""When a worker process stops, and how hard: asked once, asked again, or a thread died.

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
from collections.abc import Callable

import attrs

#: The exit status of a process stopped because one of its threads died.
THREAD_DIED_EXIT = 70  # EX_SOFTWARE
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
    ) -> int:
        """Wait up to `timeout` for the running jobs (the processors' and the `on_loop()`
        async ones), or until hurried; how many still run."""
        deadline = time.monotonic() + timeout

        def unfinished_now() -> int:
            return sum(thread.is_alive() for thread in processors) + on_loop()

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
