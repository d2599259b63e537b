"""The event loop of a worker process: where its `async def` jobs run, at most
`Config.async_concurrency` at once, on one thread of its own.

A processor thread that takes an async job waits for a free place on the
loop, hands the job over and goes back for the next one: hundreds of
I/O-bound jobs need one thread, not hundreds.  The heartbeat and the other
housekeeping threads don't run on the loop, so a job that blocks it (CPU
work, a sync call) can't starve them; a watchdog thread says in the log
when the loop was blocked longer than `Config.async_block_warning`, naming
what ran on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from cogworker.app.config import Config
from cogworker.app.worker.state import WorkerState

#: How long a processor waits for a free place before looking whether the process stops.
SLOT_POLL = 0.1
#: How long cancelled jobs get to unwind at the end of a stop.
CANCEL_GRACE = 5.0


class EventLoop:
    """One asyncio loop on its own thread, with `limit` places for jobs."""

    def __init__(
        self,
        limit: int,
        logger: logging.Logger,
        *,
        block_warning: float = 1.0,
        describe: Callable[[], str] = lambda: "",
    ) -> None:
        """`describe()` names what runs on the loop, for the blocked-loop warning."""
        self.loop = asyncio.new_event_loop()
        self._places = threading.BoundedSemaphore(limit)
        self._tasks: set[concurrent.futures.Future[None]] = set()
        self._tasks_lock = threading.Lock()
        self._logger = logger
        self._block_warning = block_warning
        self._describe = describe
        self._last_tick = time.monotonic()
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, spawn: Callable[[str, Callable[[], None]], None]) -> None:
        """Run the loop (and its watchdog) on threads made by `spawn(name, target)`."""
        spawn("event-loop", self._run)
        if self._block_warning > 0:
            spawn("loop-watchdog", self._watch)

    def take_place(self, stopping: threading.Event) -> bool:
        """Wait for a free place for one job; False if the process stops meanwhile."""
        while not self._places.acquire(timeout=SLOT_POLL):
            if stopping.is_set():
                return False
        return True

    def give_place_back(self) -> None:
        """Return a place taken for a job that won't run after all."""
        self._places.release()

    def submit(self, job: Coroutine[Any, Any, None]) -> None:
        """Run `job` on the loop in a place taken with `take_place`, given back when it ends."""
        future = asyncio.run_coroutine_threadsafe(job, self.loop)
        with self._tasks_lock:
            self._tasks.add(future)
        future.add_done_callback(self._ended)

    def running(self) -> int:
        """How many jobs run on the loop now."""
        with self._tasks_lock:
            return len(self._tasks)

    def cancel_all(self) -> int:
        """Cancel every job still running (at the end of a stop's drain); how many were.

        Waits up to `CANCEL_GRACE` for them to unwind: a cancelled job isn't
        settled, it stays on the in-progress list for the final requeue.
        """
        with self._tasks_lock:
            left = list(self._tasks)
        for future in left:
            future.cancel()  # cancels the task on the loop too
        concurrent.futures.wait(left, timeout=CANCEL_GRACE)
        return len(left)

    def stop(self) -> None:
        """Stop the loop once what runs on it now has been cancelled or has ended."""
        self._stopped.set()
        self.loop.call_soon_threadsafe(self.loop.stop)

    def _ended(self, future: concurrent.futures.Future[None]) -> None:
        with self._tasks_lock:
            self._tasks.discard(future)
        self._places.release()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        ticking = self.loop.create_task(self._tick()) if self._block_warning > 0 else None
        try:
            self.loop.run_forever()
        finally:
            if ticking is not None:
                # Unwound before the loop closes: a task left pending is reported at exit.
                ticking.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    self.loop.run_until_complete(ticking)
            self.loop.close()

    async def _tick(self) -> None:
        """Stamp the loop's liveness, often: a stamp that goes stale means a blocked loop."""
        while True:
            self._last_tick = time.monotonic()
            await asyncio.sleep(self._block_warning / 4)

    def _watch(self) -> None:
        warned_for = 0.0
        while not self._stopped.wait(self._block_warning / 4):
            stamp = self._last_tick
            blocked = time.monotonic() - stamp
            if blocked > self._block_warning and stamp != warned_for:
                warned_for = stamp
                self._logger.warning(
                    "the event loop has been blocked for %.1fs: an async job is running "
                    "sync code (CPU work, a blocking call) instead of awaiting; running: %s",
                    blocked,
                    self._describe() or "nothing",
                    extra={"reason": "loop-blocked"},
                )


def event_loop_for(config: Config, state: WorkerState, logger: logging.Logger) -> EventLoop | None:
    """The event loop of a worker process with `config` (none with `async_concurrency=0`)."""
    if config.async_concurrency == 0:
        return None

    def on_the_loop() -> str:
        running = state.running_jobs().items()
        return ", ".join(f"{w.class_name} {w.jid}" for n, w in running if n.startswith("loop:"))

    return EventLoop(
        config.async_concurrency,
        logger,
        block_warning=config.async_block_warning,
        describe=on_the_loop,
    )
