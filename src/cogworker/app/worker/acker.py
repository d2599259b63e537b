"""The acker: writes finished jobs' acknowledgements in batches, one round trip for many.

A processor hands a finished job's outcome over and takes its next job at
once; the job stays on this process's in-progress list until its ack is
written, so a crash meanwhile means it runs again (at least once), never
that it is lost.  A batch is what has piled up while the previous one was
being written: under load many acks share a round trip, when idle each goes
at once.
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Callable

import attrs
import redis

from cogworker.adapters.job_store import JobStore, Settlement
from cogworker.app.worker.state import WorkerState

#: Most acks written in one round trip.
BATCH = 200


@attrs.define
class Acker:
    """Writes acks handed to it until told to stop (then drains what is left)."""

    store: JobStore
    state: WorkerState
    logger: logging.Logger
    #: This process's identity (None: basic fetch, no in-progress list to check).
    owner: str | None
    clock: Callable[[], float] = time.time
    _queue: queue.SimpleQueue[Settlement | None] = attrs.field(factory=queue.SimpleQueue)

    def submit(self, settlement: Settlement) -> None:
        """Hand over a finished job's ack."""
        self._queue.put(settlement)

    def stop(self) -> None:
        """Ask the thread to write what is queued, then end."""
        self._queue.put(None)

    def run(self) -> None:
        """The thread's loop."""
        while True:
            first = self._queue.get()
            batch, stopping = self._batch(first)
            if batch:
                self._write(batch)
            if stopping:
                return

    def _batch(self, first: Settlement | None) -> tuple[list[Settlement], bool]:
        if first is None:
            return [], True
        batch = [first]
        while len(batch) < BATCH:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                return batch, True
            batch.append(item)
        return batch, False

    def _write(self, batch: list[Settlement]) -> None:
        try:
            owned = self.store.settle_many(self.owner, batch, self.clock())
        except redis.RedisError as error:
            for settlement in batch:
                self.state.pending.remember(settlement)
            self.logger.error(
                "couldn't acknowledge %d finished jobs (%s); will ack them later, "
                "they won't run again",
                len(batch),
                error,
                extra={"reason": "ack-interrupted"},
            )
            return
        for settlement, written in zip(batch, owned, strict=True):
            self.state.release(settlement.fetched.raw)
            if not written:
                self.logger.warning(
                    "the job was no longer this process's (recovered by another as an orphan); "
                    "nothing written for this run",
                    extra={"jid": settlement.outcome.jid, "reason": "lost-ownership"},
                )
