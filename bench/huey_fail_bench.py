"""Huey in the failing workload (bench/fail_run.py).

The harness's Huey adapter (`adapters.huey_bench`: RedisHuey "bench", the
consumer `-k process -w 2 -q`) with one more task, "fail", put in the
harness's task table so its client enqueues it by kind. Huey retries only
when asked: `retries=25, retry_delay=15` (its default delay, 0, would
requeue at once instead of scheduling); a failure is filed in the
schedule sorted set, which `filed(r)` counts.
"""

from __future__ import annotations

import fail_work

from adapters import huey_bench

NAME = "huey"
VARIANTS = {"process2": huey_bench.VARIANTS["process2"]}
huey = huey_bench.huey  # what the consumer command names


@huey.task(retries=fail_work.RETRIES, retry_delay=fail_work.RETRY_DELAY)
def fail(i: int) -> None:
    fail_work.attempt()


huey_bench.TASKS[fail_work.KIND] = fail


describe, worker_commands = fail_work.on_harness_adapter(
    huey_bench, __name__, f"retries={fail_work.RETRIES}, retry_delay={fail_work.RETRY_DELAY:g} s"
)


Client = huey_bench.Client  # TASKS[kind](arg)


def filed(r) -> int:
    """Tasks waiting in the schedule (where a retry with a delay goes)."""
    return r.zcard(huey.storage.schedule_key)
