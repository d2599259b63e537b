"""Redis's clock, read locally: one clock for due times, however the hosts' clocks differ.

A scheduled or retry job's due time is written by one host and compared by
another's poller.  On each host's own wall clock, a host 2 minutes ahead
runs jobs 2 minutes early, and one behind files retries in the past.  Redis
is the one clock they share (heartbeats are stamped with its `TIME`
already), so every due time is Redis's time: the local monotonic clock plus
an offset measured with `TIME` now and then.  Between measurements a
reading costs no round trip, and the local wall clock (which NTP or an
operator may step) plays no part.
"""

from __future__ import annotations

import threading
import time

import attrs
import redis

#: How often the offset is measured again (monotonic clocks drift slowly).
REFRESH_EVERY = 30.0
#: After a failed measurement (Redis away), how long until the next try.
RETRY_AFTER = 1.0


@attrs.define
class RedisClock:
    """A callable giving Redis's current time (unix seconds); thread-safe.

    Until a first measurement succeeds, it gives the local wall clock.
    """

    client: redis.Redis
    refresh_every: float = REFRESH_EVERY
    #: Redis's time minus the local monotonic clock (None: never measured).
    _offset: float | None = attrs.field(default=None, init=False)
    _next_measure: float = attrs.field(default=0.0, init=False)
    _measuring: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def __call__(self) -> float:
        """Redis's time now."""
        if time.monotonic() >= self._next_measure:
            self.measure()
        offset = self._offset
        if offset is None:
            return time.time()
        return time.monotonic() + offset

    def measure(self) -> None:
        """Measure the offset with one `TIME` (skipped while another thread measures)."""
        if not self._measuring.acquire(blocking=False):
            return
        try:
            before = time.monotonic()
            seconds, microseconds = self.client.time()
            after = time.monotonic()
            # Redis read its clock somewhere in the round trip: its middle is the best guess.
            self._offset = seconds + microseconds / 1e6 - (before + after) / 2
            self._next_measure = after + self.refresh_every
        except redis.RedisError:
            self._next_measure = time.monotonic() + RETRY_AFTER
        finally:
            self._measuring.release()
