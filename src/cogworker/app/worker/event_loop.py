"""The event loop of a worker process: where its `async def` jobs run, at most
`Config.async_concurrency` at once, on one thread of its own.

The fetcher hands the async jobs of each fetch over in one batch, one
wake-up of the loop for all (no processor thread in between); they wait on
the loop for a free place, holding their fetch slots until they start, as
a job waiting for a thread does: hundreds of I/O-bound jobs need no thread
of their own.  The heartbeat and the other
housekeeping threads don't run on the loop, so a job that blocks it (CPU
work, a sync call) can't starve them; a watchdog thread says in the log
when the loop was blocked longer than `Config.async_block_warning`, naming
what ran on it.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from cogworker.app.config import Config
from cogworker.app.worker.state import WorkerState

#: How long cancelled jobs get to unwind at the end of a stop.
CANCEL_GRACE = 5.0


#: A job for the loop: makes its coroutine once it has a place.
Start = Callable[[], Coroutine[Any, Any, None]]


class EventLoop:
    """One asyncio loop on its own thread, with `limit` places for jobs."""

    def __init__(
        self,
        limit: int,
        logger: logging.Logger,
        *,
        block_warning: float = 1.0,
        describe: Callable[[], str] = lambda: "",
        stopping: threading.Event | None = None,
    ) -> None:
        """`describe()` names what runs on the loop, for the blocked-loop warning; once
        `stopping` is set, jobs still waiting for a place don't start."""
        self.loop = asyncio.new_event_loop()
        self._limit = limit
        #: Jobs handed over and waiting for a place (touched on the loop only).
        self._waiting: collections.deque[Start] = collections.deque()
        #: The jobs running: read from other threads, changed on the loop only.
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = stopping or threading.Event()
        #: Told how many waiting jobs just started (their fetch slots are free).
        self._on_started: Callable[[int], None] = lambda count: None
        self._started_since_told = 0
        self._logger = logger
        self._block_warning = block_warning
        self._describe = describe
        self._last_tick = time.monotonic()
        self._stopped = threading.Event()

    def start(
        self,
        spawn: Callable[[str, Callable[[], None]], None],
        on_started: Callable[[int], None] = lambda count: None,
    ) -> None:
        """Run the loop (and its watchdog) on threads made by `spawn(name, target)`;
        `on_started(n)`: n jobs handed over have just taken a place."""
        self._on_started = on_started
        spawn("event-loop", self._run)
        if self._block_warning > 0:
            spawn("loop-watchdog", self._watch)

    def admit(self, starts: list[Start]) -> None:
        """Hand jobs over from another thread, in one wake-up of the loop; each starts
        as soon as it has a place (never once the process is stopping)."""
        self.loop.call_soon_threadsafe(self._admitted, starts)

    def running(self) -> int:
        """How many jobs run on the loop now."""
        return len(self._tasks)

    def cancel_all(self) -> int:
        """Cancel every job still running (at the end of a stop's drain); how many were.

        Waits up to `CANCEL_GRACE` for them to unwind: a cancelled job isn't
        settled, it stays on the in-progress list for the final requeue.
        """
        cancelling = asyncio.run_coroutine_threadsafe(self._cancel_running(), self.loop)
        try:
            return cancelling.result(CANCEL_GRACE + 1.0)
        except concurrent.futures.TimeoutError:  # a job blocks the loop: the requeue goes on
            return self.running()

    def stop(self) -> None:
        """Stop the loop once what runs on it now has been cancelled or has ended."""
        self._stopped.set()
        self.loop.call_soon_threadsafe(self.loop.stop)

    def _admitted(self, starts: list[Start]) -> None:
        self._waiting.extend(starts)
        self._start_waiting()

    def _start_waiting(self) -> None:
        """Start waiting jobs while there are places; say how many started, once per turn."""
        if self._stopping.is_set():
            return  # left on the in-progress list for the final requeue
        started = 0
        while self._waiting and len(self._tasks) < self._limit:
            task = self.loop.create_task(self._waiting.popleft()())
            self._tasks.add(task)
            task.add_done_callback(self._ended)
            started += 1
        if started:
            if not self._started_since_told:
                self.loop.call_soon(self._tell_started)
            self._started_since_told += started

    def _tell_started(self) -> None:
        count, self._started_since_told = self._started_since_told, 0
        self._on_started(count)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._start_waiting()

    async def _cancel_running(self) -> int:
        left = list(self._tasks)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=CANCEL_GRACE)
        return len(left)

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
            # With no job on the loop, a late tick means this process got no CPU (a
            # loaded machine), not a job holding the loop: nothing to name.
            if blocked > self._block_warning and stamp != warned_for and self._tasks:
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
        stopping=state.stopping,
    )
