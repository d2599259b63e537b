"""Jobs and APP configs for the production-Redis tests (TLS, ACL, Sentinel).

Workers import this module as APP (the Redis comes from `--redis-url`, the
environment or a URL file) and to load the job classes.  Each run records
itself in the side-effect Redis named by `$COGWORKER_TEST_REDIS_URL`, a
plain server apart from the one under test, so what the jobs did survives
a failover of the one they were fetched from.
"""

from __future__ import annotations

import time

import cogworker
from cogworker import Job
from cogworker.app.periodic import Periodic
from tests.app.jobs import JobBoomError, side_effects

#: Short timings; no log line per job (a drain runs thousands).
config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.5,
    shutdown_timeout=2.0,
    concurrency=10,
    log_level="WARNING",
)


def record(kind: str, jid: str) -> int:
    """Count a run of `jid` in `runs:KIND` (a hash: jid -> runs), keep when its first run
    was in `first:KIND` (jid -> Unix time); this run's number."""
    pipe = side_effects().pipeline(transaction=False)
    pipe.hincrby(f"runs:{kind}", jid, 1)
    pipe.hsetnx(f"first:{kind}", jid, time.time())
    return int(pipe.execute()[0])


class Drain(Job):
    """Succeeds, counting its runs."""

    def perform(self, number: int) -> None:
        record("drain", self.jid)


class FailsOnce(Job, retry=3):
    """Fails its first run (1 s to the retry), then succeeds; counts its runs."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        return 1.0

    def perform(self, number: int) -> None:
        if record("fails_once", self.jid) == 1:
            raise JobBoomError(f"first run of {number}")
        record("fails_once:done", self.jid)


class Dies(Job, retry=0):
    """Always fails, with no retry: straight to dead."""

    def perform(self, number: int) -> None:
        record("dies", self.jid)
        raise JobBoomError(f"dies {number}")


class Unique(Job, unique="until_executed"):
    """A unique job: one of its arguments at a time."""

    def perform(self, key: str) -> None:
        record("unique", self.jid)


class Tick(Job):
    """The periodic job: every second."""

    def perform(self) -> None:
        record("tick", self.jid)


#: `config` with a periodic job every second.
periodic_config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.5,
    shutdown_timeout=2.0,
    concurrency=10,
    log_level="WARNING",
    periodic=(Periodic(cron="* * * * * *", job=Tick, name="tick"),),
)


class Live(Job):
    """Enqueued while the failover happens; counts its runs apart from the drain's."""

    def perform(self, number: int) -> None:
        record("live", self.jid)
