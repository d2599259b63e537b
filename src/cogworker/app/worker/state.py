"""What the threads of one worker process share."""

from __future__ import annotations

import threading
import time

import attrs

from cogworker.adapters.job_store import Fetched, Outcome


@attrs.frozen(kw_only=True)
class Settlement:
    """An outcome that couldn't be written (Redis away), for the job as fetched.

    An ack remembered this way means the job is never run again because of
    it; a failure, that it is filed where it was going once Redis is back.
    """

    fetched: Fetched
    outcome: Outcome


@attrs.define
class PendingSettlements:
    """Writes that failed while Redis was away, by payload; the reconciler retries them.

    Their jobs stay on the in-progress list meanwhile, so a crash makes them
    orphans (run again), never losses.
    """

    _lock: threading.Lock = attrs.field(factory=threading.Lock)
    _pending: dict[bytes, Settlement] = attrs.field(factory=dict)

    def remember(self, settlement: Settlement) -> None:
        """Keep a settlement to retry."""
        with self._lock:
            self._pending[settlement.fetched.raw] = settlement

    def snapshot(self) -> list[Settlement]:
        """The settlements still to write."""
        with self._lock:
            return list(self._pending.values())

    def __contains__(self, raw: bytes) -> bool:
        with self._lock:
            return raw in self._pending

    def forget(self, settlement: Settlement) -> None:
        """Drop a settlement that has been written (or that nothing is left to write for)."""
        with self._lock:
            self._pending.pop(settlement.fetched.raw, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)


@attrs.define
class WorkerState:
    """Flags and tables every thread of a worker process reads or writes."""

    identity: str
    started_at: float = attrs.field(factory=time.time)
    stopping: threading.Event = attrs.field(factory=threading.Event)
    quiet: threading.Event = attrs.field(factory=threading.Event)
    pending: PendingSettlements = attrs.field(factory=PendingSettlements)
    #: Since when Redis has answered without a break (None while it doesn't).
    healthy_since: float | None = None
    _running: dict[str, str] = attrs.field(factory=dict)
    _running_lock: threading.Lock = attrs.field(factory=threading.Lock)
    #: Payloads this process knows it holds (fetched and not yet settled).
    _held: set[bytes] = attrs.field(factory=set)

    def hold(self, raw: bytes) -> None:
        """Note a fetched job as this process's until `release`."""
        with self._running_lock:
            self._held.add(raw)

    def release(self, raw: bytes) -> None:
        """Note a job as settled (or handed back)."""
        with self._running_lock:
            self._held.discard(raw)

    def holds(self, raw: bytes) -> bool:
        """Whether this process knows it holds `raw`."""
        with self._running_lock:
            return raw in self._held

    def started(self, thread: str, work: str) -> None:
        """Note that `thread` runs `work` (a JSON description) now."""
        with self._running_lock:
            self._running[thread] = work

    def finished(self, thread: str) -> None:
        """Note that `thread` is idle again."""
        with self._running_lock:
            self._running.pop(thread, None)

    def running(self) -> dict[str, str]:
        """What each busy thread runs, by thread name."""
        with self._running_lock:
            return dict(self._running)
