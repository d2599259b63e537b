"""The concurrency places (`domain.key_limits`) this process's running jobs hold.

The heartbeat renews them, a settlement names its job's place so that its
script lets it go, and a run's end forgets it (`WorkerState.finished`).
"""

from __future__ import annotations

import threading

import attrs


@attrs.define
class HeldPlaces:
    """jid → the holders key of the place its run holds."""

    _places: dict[str, str] = attrs.field(factory=dict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def hold(self, jid: str, holders: str) -> None:
        """Note that `jid` holds a place in `holders`."""
        with self._lock:
            self._places[jid] = holders

    def place_of(self, jid: str) -> str:
        """The holders key `jid`'s place is in ("" for none): its settlement lets it go."""
        with self._lock:
            return self._places.get(jid, "")

    def forget(self, jid: str) -> str:
        """`jid`'s run is over here; the holders key its place was in ("" for none)."""
        with self._lock:
            return self._places.pop(jid, "")

    def by_key(self) -> dict[str, list[str]]:
        """The places held, by holders key: what the heartbeat renews."""
        with self._lock:
            held: dict[str, list[str]] = {}
            for jid, holders in self._places.items():
                held.setdefault(holders, []).append(jid)
            return held
