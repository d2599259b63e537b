"""Fetch slots: how many more jobs the fetcher may take, and when it is worth waking it.

A process holds at most `concurrency + prefetch` jobs (running, or fetched
and waiting in its buffer).  Waking the fetcher costs a thread switch and
its fetch a round trip, so with a prefetch buffer it is woken when half the
buffer is free, or at once when a processor has nothing left to take.
Without one (the default), every freed slot wakes it, as a job waiting in
Redis should start the moment a thread is free.
"""

from __future__ import annotations

import threading


class FetchSlots:
    """Free places for fetched jobs, shared by the fetcher and the processors."""

    def __init__(self, concurrency: int, prefetch: int = 0) -> None:
        self._free = concurrency + prefetch
        #: Free places worth a wake-up while processors still have jobs to take.
        self._batch = max(1, (prefetch + 1) // 2)
        self._starving = False
        self._changed = threading.Condition(threading.Lock())

    def take(self, timeout: float) -> int:
        """Wait up to `timeout` until a fetch is worth it, then take every free place (0: none)."""
        with self._changed:
            if not self._changed.wait_for(self._worth_fetching, timeout):
                return 0
            taken, self._free, self._starving = self._free, 0, False
            return taken

    def give_back(self, count: int) -> None:
        """Return places the fetch didn't fill (the fetcher is the only one waiting)."""
        with self._changed:
            self._free += count

    def finished(self, count: int = 1) -> None:
        """A job ended (or `count` async jobs started on the event loop): its place is free."""
        with self._changed:
            self._free += count
            if self._worth_fetching():
                self._changed.notify()

    def starving(self) -> None:
        """A processor found nothing to take: fetch now, whatever is free."""
        with self._changed:
            self._starving = True
            if self._worth_fetching():
                self._changed.notify()

    def _worth_fetching(self) -> bool:
        return self._free >= self._batch or (self._starving and self._free > 0)
