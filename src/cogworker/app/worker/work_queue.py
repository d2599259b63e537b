"""Fetched jobs waiting for a processor thread, and the loop each of those threads runs.

The fetcher hands jobs over through `HandOff` onto `jobs`; a thread that
finds the queue empty tells the fetch slots it is starving, so the next
fetch comes at once rather than after a whole prefetch buffer drained.
"""

from __future__ import annotations

import logging
import queue
import threading

import attrs

from cogworker.app.worker.handoff import Taken
from cogworker.app.worker.processor import Processor
from cogworker.app.worker.slots import FetchSlots


@attrs.define
class WorkQueue:
    """The jobs handed over and not yet taken by a processor thread (None: stop)."""

    slots: FetchSlots
    stopping: threading.Event
    logger: logging.Logger
    identity: str
    jobs: queue.SimpleQueue[Taken | None] = attrs.field(factory=queue.SimpleQueue)

    def serve(self, processor: Processor) -> None:
        """A processor thread's loop: run each job taken, until told to stop."""
        while True:
            taken = self._next_job()
            if taken is None:
                return
            try:
                if not self.stopping.is_set():
                    processor.process(taken)
                # else: left on the in-progress list for the shutdown requeue
            except BaseException:
                # Not the job's own error (that is settled): the job stays in
                # progress, to be requeued at shutdown or recovered as an orphan.
                self.logger.exception("processor error", extra={"identity": self.identity})
            finally:
                self.slots.finished()

    def release(self, threads: int) -> None:
        """Tell `threads` processor threads to stop once the jobs ahead are taken."""
        for _ in range(threads):
            self.jobs.put(None)

    def _next_job(self) -> Taken | None:
        """The next fetched job (None: stop), telling the fetcher when the buffer ran dry."""
        try:
            return self.jobs.get_nowait()
        except queue.Empty:
            self.slots.starving()
            return self.jobs.get()
