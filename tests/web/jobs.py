"""Job classes and the APP config of the dashboard tests' worker processes.

Workers import this module (the repo root is on their PYTHONPATH) as APP
(`tests.web.jobs:config`) and to load the job classes.  Side effects go to
the Redis named by `$COGWORKER_TEST_REDIS_URL`, as in tests/app/jobs.py.
"""

from __future__ import annotations

import time
from typing import Any

import cogworker
from cogworker import Job
from tests.app.jobs import JobBoomError, side_effects

#: Short timings: due jobs are found within ~0.3 s, heartbeats every 0.2 s.
config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.2,
    shutdown_timeout=2.0,
    concurrency=3,
    queues=("default", "web"),
)


class Done(Job, queue="web"):
    """Adds its jid to the `done` set."""

    def perform(self, *args: Any) -> None:
        side_effects().sadd("done", self.jid)


class FailsUntilAllowed(Job, queue="web", retry=False):
    """Fails straight into dead until the key `allow:JID` exists, then adds its jid to `done`."""

    def perform(self, *args: Any) -> None:
        client = side_effects()
        client.incr(f"runs:{self.jid}")
        if not client.exists(f"allow:{self.jid}"):
            raise JobBoomError(f"not allowed yet: {args!r}")
        client.sadd("done", self.jid)


class FailsThenRetries(Job, queue="web", retry=3):
    """Always fails, with its retry an hour away: it stays in the retry set."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        return 3600.0

    def perform(self, *args: Any) -> None:
        raise JobBoomError(f"retry me later: {args!r}")


class Holds(Job, queue="web"):
    """Runs until the key `release` exists (at most 30 s): work that is running now."""

    def perform(self, *args: Any) -> None:
        client = side_effects()
        client.sadd("holding", self.jid)
        client.blpop(["release"], timeout=30)
        client.lpush("release", "1")  # let the next holder go too


class Parked(Job, queue="parked"):
    """On a queue no test worker serves: it stays enqueued."""

    def perform(self, *args: Any) -> None:
        side_effects().sadd("done", self.jid)


class KeptParked(Job, queue="parked", keep_result=60):
    """Parked, keeping its result: what removing it by hand stores is read by a waiter."""

    def perform(self, *args: Any) -> None:
        side_effects().sadd("done", self.jid)


class KilledByRetryIn(Job, queue="web"):
    """Fails; its `retry_in` answers KILL: straight to dead, "killed by retry_in"."""

    @classmethod
    def retry_in(cls, count: int) -> object:
        return cogworker.KILL

    def perform(self, *args: Any) -> None:
        raise JobBoomError("kill me")


class DiscardedByRetryIn(Job, queue="web"):
    """Fails; its `retry_in` answers DISCARD: gone, "discarded by retry_in"."""

    @classmethod
    def retry_in(cls, count: int) -> object:
        return cogworker.DISCARD

    def perform(self, *args: Any) -> None:
        raise JobBoomError("discard me")


class Spins(Job, queue="web", track_status=True):
    """Runs Python steps until the key `release` exists (at most 30 s): running work a
    cancel can stop (the cancel is raised between two steps)."""

    def perform(self, *args: Any) -> None:
        client = side_effects()
        client.sadd("holding", self.jid)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not client.exists("release"):
            time.sleep(0.05)


class KeptLimitedMember(Job, queue="web", keep_result=60, limit=cogworker.Concurrency(max=1)):
    """A job keeping its result under a concurrency limit (enqueued into a batch)."""

    def perform(self, *args: Any) -> str:
        return "done"


class Kept(Job, queue="web", keep_result=60):
    """A job keeping its result: its push writes its jid index entry."""

    def perform(self, *args: Any) -> str:
        return "done"
