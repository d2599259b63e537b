"""What the threads of one worker process share."""

from __future__ import annotations

import json
import threading
import time

import attrs

from cogworker.adapters.job_store import Fetched, Target, UnsettledRecord


@attrs.frozen(kw_only=True)
class AckLater:
    """A job that ran to the end but whose ack couldn't be written: ack it, never run it again."""

    fetched: Fetched
    jid: str


@attrs.frozen(kw_only=True)
class FileLater:
    """A failed attempt whose outcome couldn't be written: file it where it was going."""

    fetched: Fetched
    jid: str
    target: Target
    score: float
    payload: str


Settlement = AckLater | FileLater


def unsettled_record(settlement: Settlement) -> str:
    """The record a stopping process hands over for `settlement` (see `JobStore.hand_over`)."""
    if isinstance(settlement, AckLater):
        return json.dumps({"jid": settlement.jid, "kind": "ack"})
    return json.dumps(
        {
            "jid": settlement.jid,
            "kind": settlement.target,
            "score": settlement.score,
            "payload": settlement.payload,
        }
    )


def parse_unsettled(record: bytes) -> UnsettledRecord | None:
    """A handed-over record, or None if it isn't one (damaged by hand, say)."""
    try:
        obj = json.loads(record)
        parsed = UnsettledRecord(
            jid=str(obj["jid"]),
            kind=obj["kind"],
            score=float(obj.get("score", 0.0)),
            payload=str(obj.get("payload", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None
    return parsed if parsed.kind in ("ack", "retry", "dead", "discard") else None


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
