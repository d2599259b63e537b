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
import redis.asyncio

from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient

#: How often the offset is measured again (monotonic clocks drift slowly).
REFRESH_EVERY = 30.0
#: After a failed measurement (Redis away), how long until the next try.
RETRY_AFTER = 1.0


@attrs.define
class ClockOffset:
    """Redis's time minus the local monotonic clock, and when to measure it again.

    Both clocks read through it: `RedisClock` measures with redis-py,
    `AsyncRedisClock` with redis.asyncio.
    """

    refresh_every: float = REFRESH_EVERY
    #: None until a first measurement succeeds.
    value: float | None = None
    next_measure: float = 0.0

    def is_due(self) -> bool:
        """Whether it is time to measure again."""
        return time.monotonic() >= self.next_measure

    def now(self) -> float:
        """Redis's time now; the local wall clock until a first measurement succeeded."""
        value = self.value
        if value is None:
            return time.time()
        return time.monotonic() + value

    def measured(self, before: float, reply: tuple[int, int], after: float) -> None:
        """Take a `TIME` reply (seconds, microseconds) asked for between the monotonic
        readings `before` and `after`."""
        seconds, microseconds = reply
        # Redis read its clock somewhere in the round trip: its middle is the best guess.
        self.value = seconds + microseconds / 1e6 - (before + after) / 2
        self.next_measure = after + self.refresh_every

    def failed(self) -> None:
        """Note a failed measurement (Redis away): try again in a while."""
        self.next_measure = time.monotonic() + RETRY_AFTER


@attrs.define
class RedisClock:
    """A callable giving Redis's current time (unix seconds); thread-safe.

    Until a first measurement succeeds, it gives the local wall clock.
    """

    client: RedisClient
    refresh_every: float = REFRESH_EVERY
    _offset: ClockOffset = attrs.field(
        default=attrs.Factory(lambda self: ClockOffset(self.refresh_every), takes_self=True),
        init=False,
    )
    _measuring: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def __call__(self) -> float:
        """Redis's time now."""
        if self._offset.is_due():
            self.measure()
        return self._offset.now()

    def measure(self) -> None:
        """Measure the offset with one `TIME` (skipped while another thread measures)."""
        if not self._measuring.acquire(blocking=False):
            return
        try:
            before = time.monotonic()
            reply = self.client.time()
            self._offset.measured(before, reply, time.monotonic())
        except redis.RedisError:
            self._offset.failed()
        finally:
            self._measuring.release()


@attrs.define
class AsyncRedisClock:
    """`RedisClock` for asyncio code: await it for Redis's current time (unix seconds).

    One event loop's tasks share it: while one measures, the others read
    the offset measured before.
    """

    client: AsyncRedisClient
    refresh_every: float = REFRESH_EVERY
    _offset: ClockOffset = attrs.field(
        default=attrs.Factory(lambda self: ClockOffset(self.refresh_every), takes_self=True),
        init=False,
    )
    _measuring: bool = attrs.field(default=False, init=False)

    async def __call__(self) -> float:
        """Redis's time now."""
        if self._offset.is_due() and not self._measuring:
            await self.measure()
        return self._offset.now()

    async def measure(self) -> None:
        """Measure the offset with one `TIME`."""
        self._measuring = True
        try:
            before = time.monotonic()
            reply = await self.client.time()
            self._offset.measured(before, reply, time.monotonic())
        except redis.RedisError:
            self._offset.failed()
        finally:
            self._measuring = False
