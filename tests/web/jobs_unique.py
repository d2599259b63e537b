"""Unique jobs the dashboard removes for good, a death handler that records what it gets, and
the worker config that runs the failing one into its retry set."""

from __future__ import annotations

import json
import os

import redis

import cogworker

#: Where nobody serves: a job enqueued there stays queued, holding its lock.
PARKED = "unique-parked"
FAILING = "unique-fails"
#: The list `record_death_in_redis` writes to, in the test's Redis.
DEATHS_KEY = "test:deaths"
#: (jid, exception type name, message) of every call of `record_death`.
DEATHS: list[tuple[str, str, str]] = []


class UniqueReport(cogworker.Job, queue=PARKED, unique="until_executed"):
    """A unique job that waits in a queue nobody serves."""

    def perform(self, day: str) -> None:
        """Nothing to do."""


class UniqueFails(cogworker.Job, queue=FAILING, unique="until_executed", retry=3):
    """A unique job that fails, then waits an hour in the retry set (its lock extended)."""

    def perform(self, day: str) -> None:
        """Fail."""
        raise RuntimeError(f"no report for {day}")

    @classmethod
    def retry_in(cls, count: int) -> float:
        """An hour: long past the test."""
        return 3600.0


def record_death(job: dict[str, object], exception: BaseException) -> None:
    """Note the job's jid and the exception a death handler was given."""
    DEATHS.append((str(job.get("jid")), type(exception).__name__, str(exception)))


#: A worker of the failing job's queue.
config = cogworker.Config(queues=(FAILING,), heartbeat_interval=0.2, shutdown_timeout=2.0)


def record_death_in_redis(job: dict[str, object], exception: BaseException) -> None:
    """Note the jid and the exception's type on `DEATHS_KEY` (from another process)."""
    with redis.Redis.from_url(os.environ["COGWORKER_TEST_REDIS_URL"]) as side_effects:
        side_effects.rpush(DEATHS_KEY, json.dumps([job.get("jid"), type(exception).__name__]))


#: What `cogworker serve tests.web.jobs_unique:dashboard` serves with.
dashboard = cogworker.Config(death_handlers=(record_death_in_redis,))
