"""Sidekiq in the failing workload (bench/fail_run.py).

bench/sidekiq_bench.py's workers and client, running `Fail`
(bench/sidekiq/jobs.rb): Sidekiq's default retry policy (retry: true, 25
retries, the first after 15-24 s); a failure is filed in the `retry`
sorted set, which `filed(r)` counts.
"""

from __future__ import annotations

import sidekiq_bench
from sidekiq_bench import VARIANTS, Client, worker_commands

NAME = "sidekiq"
__all__ = ["VARIANTS", "Client", "describe", "filed", "worker_commands"]


def describe(variant: str) -> str:
    return f"{sidekiq_bench.describe(variant)}; job `Fail` (default retry: true)"


def filed(r) -> int:
    """Jobs waiting in the retry set."""
    return r.zcard("retry")
