"""The lease: a worker fetches, and starts a job it fetched, only within less than the
orphan threshold since its last beat that landed (its own monotonic clock).

Recovery may judge a process gone once its beat is a threshold old (two looks
a threshold apart, `lua/judge_gone.lua`) and requeue its jobs.  A process
that was paused that long (SIGSTOP, a VM suspended, a debugger) resumes with
its lease run out: it beats first, and a beat finding its presence taken by
a verdict tells it it was declared gone (`BeatReply.presence_taken`).  It
then holds none of the jobs it fetched before: they are someone else's to
run (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from cogworker.adapters.jobs.fetch import Fetched

#: How long a thread waits for the lease at a time, between looks at the stop flag.
WAIT_STEP = 0.2


@attrs.define
class Lease:
    """Held while the last beat that landed was sent less than `length` seconds ago."""

    #: The orphan threshold; the default never runs out (basic fetch, whose jobs no one
    #: recovers, or a worker's parts used alone).
    length: float = math.inf
    clock: Callable[[], float] = time.monotonic
    _sent_at: float = -math.inf
    _changed: threading.Condition = attrs.field(factory=threading.Condition)

    def renew(self, sent_at: float) -> None:
        """A beat sent at `sent_at` (this lease's clock) landed."""
        with self._changed:
            self._sent_at = max(self._sent_at, sent_at)
            self._changed.notify_all()

    def held(self) -> bool:
        """Whether the lease is held now."""
        return self.clock() - self._sent_at < self.length

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the lease to be held (a beat to land)."""
        with self._changed:
            return self._changed.wait_for(self.held, timeout)


class StartingState(Protocol):
    """What the start rule reads of the worker's shared state: `state.WorkerState`, named
    by a protocol since that state holds a `Lease`, and so imports this module."""

    @property
    def lease(self) -> Lease: ...

    @property
    def stopping(self) -> threading.Event: ...

    def holds(self, raw: bytes) -> bool:
        """Whether this process still holds the job fetched as `raw`."""
        ...


def may_start(state: StartingState, fetched: Fetched, logger: logging.Logger) -> bool:
    """Whether a fetched job may start on this thread: once the lease is held (a process
    that was paused beats first), and only if this process still holds the job (a beat
    that found it declared gone let go of every job it held).  False while stopping
    without a lease: the job stays on the in-progress list, for the shutdown requeue."""
    while not state.lease.wait(WAIT_STEP):
        if state.stopping.is_set():
            return False
    return still_held(state, fetched, logger)


async def may_start_on_loop(state: StartingState, fetched: Fetched, logger: logging.Logger) -> bool:
    """`may_start` for a job on the event loop: with the lease held it answers at once;
    run out (the process was paused), the wait for a beat is on a thread, not the loop's."""
    if state.lease.held():
        return still_held(state, fetched, logger)
    return await asyncio.to_thread(may_start, state, fetched, logger)


def still_held(state: StartingState, fetched: Fetched, logger: logging.Logger) -> bool:
    """Whether this process still holds `fetched`; if not, say so (it won't run here)."""
    if state.holds(fetched.raw):
        return True
    logger.warning(
        "this process was declared gone while the job waited to start: it is another "
        "process's to run now",
        extra={"queue": fetched.queue, "reason": "lost-ownership"},
    )
    return False
