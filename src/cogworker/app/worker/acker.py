"""The acker: writes finished jobs' acknowledgements in batches, one round trip for many.

A processor hands a finished job's outcome over and takes its next job at
once; the job stays on this process's in-progress list until its ack is
written, so a crash meanwhile means it runs again (at least once), never
that it is lost.  Once an ack arrives the acker lets others gather for
`LINGER` seconds, then writes all of them: under load a round trip carries
many acks.  While acks keep coming it looks again every `LINGER` seconds
instead of waiting to be woken: a wake-up is a system call on the thread
handing the ack over (the event loop's, for async jobs), paid only once the
acker has found nothing `IDLE_LOOKS` times in a row and sleeps.
Tracked jobs' "working" marks go in the same round trips (see `StatusMarks`),
and so do retries (`Filing`: a retry storm's failures cost as little as acks).
"""

from __future__ import annotations

import collections
import functools
import logging
import threading
import time
from collections.abc import Callable

import attrs

from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.redis_client import SOCKET_TIMEOUT
from cogworker.app.worker.ownership import report_ack_interrupted, report_lost_ownership
from cogworker.app.worker.periodic_watch import EpochWatch
from cogworker.app.worker.state import WorkerState
from cogworker.app.worker.status_marks import StatusMarks

#: Most acks written in one round trip.
BATCH = 200
#: How long acks gather after the first arrived (a success's status and
#: counters show this much later; a job's start is never delayed by it).
LINGER = 0.008
#: Empty looks (LINGER apart) after which the acker sleeps until woken.
IDLE_LOOKS = 10


@attrs.frozen
class Filing:
    """A retry's outcome handed over like an ack (see `Settler.write_failure`)."""

    order: SettleOrder
    #: Called once this write filed it (its "fail" log line).
    filed: Callable[[], None]
    #: Called with the error when the write failed: settles it again as interrupted and
    #: remembers that for the reconciler.
    failed: Callable[[Exception], None]


#: What waits for the acker: an ack, what makes one (see `submit_later`), or a retry.
Waiting = SettleOrder | Callable[[], SettleOrder] | Filing


@attrs.define
class Acker:
    """Writes acks handed to it until told to stop (then drains what is left)."""

    store: SettleStore
    state: WorkerState
    logger: logging.Logger
    #: This process's identity (None: basic fetch, no in-progress list to check).
    owner: str | None
    clock: Callable[[], float] = time.time
    #: Tells a loss of Redis's data from an orphan recovery when a job is found gone.
    epoch_watch: EpochWatch | None = None
    #: Acks, or what makes them (on this thread: see `submit_later`).
    _waiting: collections.deque[Waiting] = attrs.field(factory=collections.deque)
    _marks: StatusMarks = attrs.field(factory=StatusMarks)
    _arrived: threading.Event = attrs.field(factory=threading.Event)
    #: Whether the thread looks for acks every LINGER (then none need wake it).
    _looking: bool = True
    _stopping: bool = False

    def submit(self, order: SettleOrder | Filing) -> None:
        """Hand over a finished job's ack, or a failed one's retry."""
        self._waiting.append(order)
        self._wake()

    def submit_later(self, order: Callable[[], SettleOrder]) -> None:
        """Hand over what makes a finished job's ack: made on this thread, with its batch
        (the event loop hands its jobs' acks over this way, to spend its time on jobs)."""
        self._waiting.append(order)
        self._wake()

    def mark_working(self, jid: str, queue: str, started_at: float) -> None:
        """Hand over a tracked job's "working" status (a job of `queue`), as it starts."""
        self._marks.add(jid, queue, started_at)
        self._wake()

    def withdraw_mark(self, jid: str) -> None:
        """Before a job's final status is written elsewhere: its mark can't land after it."""
        self._marks.withdraw(jid, timeout=SOCKET_TIMEOUT + 1.0)

    def _wake(self) -> None:
        # Only when the acker may be waiting: read after the hand-over (see `_sleep`).
        if not self._looking and not self._arrived.is_set():
            self._arrived.set()

    def stop(self) -> None:
        """Ask the thread to write what is queued, then end."""
        self._stopping = True
        self._arrived.set()

    def run(self) -> None:
        """The thread's loop."""
        empty_looks = 0
        while self._waiting or self._marks or not self._stopping:
            if self._waiting or self._marks:
                empty_looks = 0
            elif empty_looks < IDLE_LOOKS:
                empty_looks += 1
            else:
                self._sleep()
                empty_looks = 0
            if not self._stopping:
                time.sleep(LINGER)
            while self._waiting or self._marks:
                self._write(self._take())

    def _sleep(self) -> None:
        """Wait until an ack (or a mark, or the stop) is handed over."""
        self._looking = False
        # Cleared, then looked at: a hand-over after the look sees `_looking` false
        # and sets the flag; one before it is found here.
        self._arrived.clear()
        if not (self._waiting or self._marks or self._stopping):
            self._arrived.wait()
        self._looking = True

    def _take(self) -> list[SettleOrder | Filing]:
        batch: list[SettleOrder | Filing] = []
        while self._waiting and len(batch) < BATCH:
            waiting = self._waiting.popleft()
            order = waiting if isinstance(waiting, (SettleOrder, Filing)) else self._made(waiting)
            if order is not None:
                batch.append(order)
        return batch

    def _made(self, make: Callable[[], SettleOrder]) -> SettleOrder | None:
        try:
            return make()
        except Exception:  # a bug, not the job's: it stays in progress, to run again
            self.logger.exception("couldn't make a finished job's ack; it will run again")
            return None

    def _write(self, batch: list[SettleOrder | Filing]) -> None:
        orders = [item.order if isinstance(item, Filing) else item for item in batch]
        # Acks first, then marks: a mark is never taken after its job's ack (see StatusMarks).
        working = self._marks.take({done.outcome.jid for done in orders}) if self._marks else {}
        try:
            owned = self.store.settle_many(self.owner, orders, self.clock(), working=working)
        except Exception as error:  # not only Redis: the reconciler retries, the thread lives
            self._write_failed(batch, len(working), error)
            return
        finally:
            self._marks.written()
        for item, order, written in zip(batch, orders, owned, strict=True):
            self.state.release(order.fetched.raw)
            if not written:
                outcome = order.outcome
                report_lost_ownership(
                    self.logger, self.epoch_watch, outcome.jid, outcome.class_name
                )
            elif isinstance(item, Filing):
                self._call(item.filed)

    def _write_failed(
        self, batch: list[SettleOrder | Filing], marks: int, error: Exception
    ) -> None:
        acked: list[str] = []
        for item in batch:
            if isinstance(item, Filing):
                self._call(functools.partial(item.failed, error))
            else:
                self.state.pending.remember(item)
                acked.append(item.outcome.jid)
        if acked:
            report_ack_interrupted(self.logger, error, acked)
        elif marks and not batch:
            # Informational only: each job's outcome sets its status again.
            self.logger.warning("couldn't mark %d tracked jobs working (%s)", marks, error)

    def _call(self, then: Callable[[], None]) -> None:
        """Run what follows a retry's write; a bug in it mustn't end the thread."""
        try:
            then()
        except Exception:
            self.logger.exception("couldn't finish filing a failed job's retry")
