"""Job classes and APP configs of the command budgets (tests/budgets/test_command_budgets.py).

Every job is a no-op taking a number (distinct numbers keep the unique jobs distinct), so
what a drain costs in Redis commands is the worker's own path, nothing the job sends.
"""

from __future__ import annotations

from typing import Any

import cogworker
from cogworker import Job

#: The defaults, quiet: a log line per job writes nothing to Redis, but costs the run time.
defaults = cogworker.Config(log_level="WARNING")
#: The tuned configuration of docs/benchmarks.md.
tuned = cogworker.Config(log_level="WARNING", concurrency=20, prefetch=40)


class FailingJobError(RuntimeError):
    """What `Fails` raises: an ordinary failure, filed for retry."""


class Plain(Job):
    """Uses no feature: the plain path."""

    def perform(self, number: int) -> None:
        del number


class Tracked(Plain, track_status=True):
    """Keeps its status."""


class Unique(Plain, unique="until_executed"):
    """Holds a unique lock (its number makes it distinct) until it has run."""


class KeptResult(Plain, keep_result=600):
    """Keeps its result for `Client.result`."""


class Limited(Plain, limit=cogworker.Concurrency(max=100)):
    """Under a `Concurrency` limit it never reaches (100 > the worker's threads): the
    gate's cost without a deferral."""


class TimeLimited(Plain, timeout=600):
    """Has a time limit it never reaches."""


class Fails(Job, retry=1):
    """Raises; filed for its one retry an hour later, so no retry runs during the test."""

    def perform(self, number: int) -> None:
        raise FailingJobError(f"job {number} fails on purpose")

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, Any]) -> float:
        return 3600.0
