"""The failing workload's job body and rules (issue #25), the same for every library.

A job does the harness's one `INCR` (on its own key, ATTEMPTS_KEY, so that
a job run again within the drain shows as attempts above N) and then
raises. Each library's own retry mechanism is on, and the failure must be
*scheduled* for a retry, filed where the library keeps jobs waiting for a
time, as each does by default: cogworker's and Sidekiq's `retry` sorted
set, Dramatiq's delay queue, Huey's schedule, SAQ's incomplete set with a
future score, taskiq's schedule source. Each adapter's `filed(r)` counts
the jobs filed there; the failing drain is the time from starting the
workers until all N are filed (bench/fail_run.py).

Where a library retries by default (cogworker, Sidekiq, Dramatiq) its
defaults are kept. Where retries must be switched on, they are, with
RETRIES retries (Sidekiq's and cogworker's default count) and the library's
own default delay when it has one that schedules (taskiq's
SmartRetryMiddleware: 5 s), else RETRY_DELAY (Huey and SAQ default to 0 s,
which requeues at once instead of scheduling). Tracked status stays off
(cogworker's default).
"""

from __future__ import annotations

import common

KIND = "fail"
ATTEMPTS_KEY = "bench:attempts"
MESSAGE = "bench: failing on purpose"
#: Retries where the library has none by default (Sidekiq's and cogworker's 25).
RETRIES = 25
#: Seconds before the first retry where the library's default would not schedule
#: one: the order of the first delay of Sidekiq (15-24 s), Dramatiq (15-30 s), cogworker (16-76 s).
RETRY_DELAY = 15.0


class DeliberateError(Exception):
    """What every failing job raises."""


def attempt() -> None:
    """The whole job: count the attempt, then fail."""
    common.job_redis().incr(ATTEMPTS_KEY)
    raise DeliberateError(MESSAGE)


def on_harness_adapter(harness_adapter, module: str, retry: str):
    """`describe` and `worker_commands` for this workload's adapter `module`, which
    imports the harness's `harness_adapter` and adds the failing job: the harness's
    command lines and description, loading `module` instead, and the retry policy."""
    old = harness_adapter.__name__

    def describe(variant: str) -> str:
        text = harness_adapter.describe(variant).replace(old, module)
        return f"{text}; job `{KIND}`: {retry}"

    def worker_commands(url: str, variant: str) -> list[list[str]]:
        commands = harness_adapter.worker_commands(url, variant)
        return [[arg.replace(old, module) for arg in command] for command in commands]

    return describe, worker_commands
