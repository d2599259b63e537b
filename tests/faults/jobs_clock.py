"""Jobs for the clock-skew tests: each run stamps itself with Redis's own clock.

A worker run under faketime has its clock off; Redis's `TIME` is the one
time both the test and the worker agree on, so the stamps use it.
"""

from __future__ import annotations

from typing import Any

import cogworker
from tests.faults.jobs import side_effects

#: The retry delay of `FailsOnce`, seconds.
RETRY_DELAY = 6


def redis_now() -> float:
    """Redis's clock, read with `TIME`."""
    seconds, microseconds = side_effects().time()
    return seconds + microseconds / 1e6


def stamp(event: str, jid: str) -> None:
    """Record `event` of run `jid` at Redis's time, in the hash `clock:JID`."""
    side_effects().hset(f"clock:{jid}", event, repr(redis_now()))


class Stamp(cogworker.Job):
    """Records when it ran, by Redis's clock."""

    def perform(self) -> None:
        """Stamp the run."""
        stamp("ran", self.jid)


class FailsOnce(cogworker.Job, retry=3):
    """Fails its first run (retried `RETRY_DELAY` s later), then records its second."""

    @classmethod
    def retry_in(cls, count: int, exception: Exception, job: Any) -> int:
        """A fixed delay, so the gap between the two runs is known."""
        return RETRY_DELAY

    def perform(self) -> None:
        """Fail the first time, stamp the second."""
        if side_effects().hsetnx(f"clock:{self.jid}", "failed", repr(redis_now())):
            raise RuntimeError("the first run fails")
        stamp("retried", self.jid)
