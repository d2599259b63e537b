"""The batch mover: folds the batch events of this process's queues into their batches
and pushes the callbacks that became due (`app/batch_folding.py`).

It wakes when this process wrote a settlement that appended an event (the
settle store tells it), so a callback follows its batch's last job within a
round trip or two, and otherwise looks every `LOOK_EVERY` seconds at most, for
events other processes left (a cancel from a client, a process that died
between a settlement and its fold).  Every process folds its own queues'
events; two folding the same event is harmless (the fold is idempotent).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

import attrs

from cogworker.adapters.batch_store import BatchStore
from cogworker.app.batch_folding import fold_queue
from cogworker.app.worker.backoff import repeat

#: The longest pause between two looks at the queues' events.
LOOK_EVERY = 1.0


@attrs.define
class BatchMover:
    """Folds the batch events of `queues`."""

    store: BatchStore
    queues: Sequence[str]
    stopping: threading.Event
    logger: logging.Logger
    interval: float = LOOK_EVERY
    clock: Callable[[], float] = time.time
    _woken: threading.Event = attrs.field(factory=threading.Event, init=False)

    def wake(self) -> None:
        """Look now: a settlement just appended an event."""
        self._woken.set()

    def run(self) -> None:
        """The thread's loop."""
        repeat(self._step, what="fold batch events", logger=self.logger, until=self.stopping)

    def _step(self) -> float:
        self._woken.clear()
        for queue in self.queues:
            fold_queue(self.store, queue, self.clock)
        self._woken.wait(self.interval)
        return 0.0
