"""Settlements this process couldn't write while Redis was away, kept to retry."""

from __future__ import annotations

import threading

import attrs

from cogworker.adapters.jobs.settle_order import SettleOrder


@attrs.define
class PendingSettlements:
    """Writes that failed while Redis was away, by payload; the reconciler retries them.

    Their jobs stay on the in-progress list meanwhile, so a crash makes them
    orphans (run again), never losses.
    """

    _lock: threading.Lock = attrs.field(factory=threading.Lock)
    _pending: dict[bytes, SettleOrder] = attrs.field(factory=dict)

    def remember(self, order: SettleOrder) -> None:
        """Keep a settlement to retry."""
        with self._lock:
            self._pending[order.fetched.raw] = order

    def snapshot(self) -> list[SettleOrder]:
        """The settlements still to write."""
        with self._lock:
            return list(self._pending.values())

    def __contains__(self, raw: bytes) -> bool:
        with self._lock:
            return raw in self._pending

    def forget(self, order: SettleOrder) -> None:
        """Drop a settlement that has been written (or that nothing is left to write for)."""
        with self._lock:
            self._pending.pop(order.fetched.raw, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)
