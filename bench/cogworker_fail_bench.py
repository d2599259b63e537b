"""cogworker in the failing workload (bench/fail_run.py): every job raises.

The workers, configurations and client of cogworker_bench (its variants,
`cogworker work cogworker_bench:config_<variant>`), running `Fail`: the
default retry policy (`retry=True`: 25 retries, the first after a Sidekiq-like
backoff, 16-76 s) and tracked status off (`Config.track_status` and the
class's `track_status` default False). A failure is filed in the retry
sorted set, which `filed(r)` counts.
"""

from __future__ import annotations

import cogworker_bench
import fail_work

import cogworker
from cogworker.adapters import redis_keys

NAME = "cogworker"
VARIANTS = cogworker_bench.VARIANTS
worker_commands = cogworker_bench.worker_commands


class Fail(cogworker.Job, queue=cogworker_bench.QUEUE):
    def perform(self, i: int) -> None:
        fail_work.attempt()


def describe(variant: str) -> str:
    return f"{cogworker_bench.describe(variant)}; job `Fail` (class defaults: retry=True)"


JOBS = {fail_work.KIND: Fail}


class Client(cogworker_bench.Client):
    jobs = JOBS


def filed(r) -> int:
    """Jobs waiting in the bench queue's retry set."""
    return r.zcard(redis_keys.retry(cogworker_bench.QUEUE))
