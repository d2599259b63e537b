"""Periodic jobs and configs of the tests: every run is written down in the test's Redis.

A server middleware notes each run's start and end (jid, periodic name, the
tick it runs for, pid, time) as JSON on `RUNS`, so a test sees what ran, for
which tick, where and when, whatever the job itself does.

The bad configs are built when looked up (the module's `__getattr__`), so
importing this module never fails: `cogworker work tests.periodic.jobs:bad_cron`
meets the ConfigError where it would meet one in a user's app module.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

import attrs
import redis

import cogworker
from cogworker import Periodic, RunContext
from tests.support.topology import plain_client

RUNS = "test:periodic:runs"
#: The cron of the catch-up and replace configs, set by the test: a minute far from now.
CRON = os.environ.get("COGWORKER_TEST_CRON", "0 0 1 1 *")

_redis: redis.Redis | None = None


def _side_effects() -> redis.Redis:
    global _redis
    if _redis is None:
        _redis = plain_client(os.environ["COGWORKER_TEST_REDIS_URL"], socket_timeout=5)
    return _redis


def _note(event: str, ctx: RunContext) -> None:
    record = {
        "event": event,
        "jid": ctx.job.jid,
        "name": ctx.job.extra.get("periodic"),
        "tick": ctx.job.extra.get("periodic_at"),
        "pid": os.getpid(),
        "at": time.time(),
    }
    _side_effects().rpush(RUNS, json.dumps(record))


def record_runs(ctx: RunContext, run: Callable[[], None]) -> None:
    """Note the start and the end of every run."""
    _note("start", ctx)
    try:
        run()
    finally:
        _note("end", ctx)


class Tick(cogworker.Job):
    """Does nothing: its runs are what the test counts."""

    def perform(self) -> None:
        """Nothing to do."""


class Sleeps(cogworker.Job):
    """Runs for a while."""

    def perform(self, seconds: float) -> None:
        """Sleep `seconds`."""
        time.sleep(seconds)


base = cogworker.Config(
    concurrency=4,
    poll_interval=0.2,
    heartbeat_interval=0.2,
    shutdown_timeout=2.0,
    server_middleware=(record_runs,),
)

#: A tick every second.  "all": a look that comes late still runs each tick it missed.
every_second = attrs.evolve(
    base,
    periodic=(Periodic(cron="* * * * * *", job=Tick, name="tick"),),
    periodic_catch_up="all",
)
#: A 2.5 s job due every second.
overlapping = attrs.evolve(
    base, periodic=(Periodic(cron="* * * * * *", job=Sleeps, args=[2.5], name="slow"),)
)
#: A job that outlives the test, due every second, its running lock good for 3 s.
hanging = attrs.evolve(
    base,
    periodic=(Periodic(cron="* * * * * *", job=Sleeps, args=[60], name="hang"),),
    periodic_lock_ttl=3.0,
)

hourly = Periodic(cron=CRON, job=Tick, name="hourly")
catch_up_none = attrs.evolve(base, periodic=(hourly,), periodic_catch_up="none")
catch_up_last = attrs.evolve(base, periodic=(hourly,), periodic_catch_up="last")
catch_up_all = attrs.evolve(base, periodic=(hourly,), periodic_catch_up="all")
catch_up_all_3 = attrs.evolve(catch_up_all, periodic_catch_up_limit=3)
replacing = attrs.evolve(base, periodic=(hourly,), periodic_replace=True)
merging = attrs.evolve(base, periodic=(hourly,), periodic_replace=False)


def _unimportable() -> type[cogworker.Job]:
    class Hidden(cogworker.Job):
        """A class no worker can import: it lives inside a function."""

    return Hidden


_BAD: dict[str, Callable[[], Periodic]] = {
    "bad_cron": lambda: Periodic(cron="0 25 * * *", job=Tick, name="broken-cron"),
    "bad_tz": lambda: Periodic(cron="* * * * *", job=Tick, name="far-away", tz="Mars/Olympus"),
    "bad_class": lambda: Periodic(cron="* * * * *", job=_unimportable(), name="hidden"),
}


def __getattr__(name: str) -> cogworker.Config:
    """The bad configs, built (and failing) on lookup."""
    if name not in _BAD:
        raise AttributeError(name)
    return attrs.evolve(base, periodic=(_BAD[name](),))
