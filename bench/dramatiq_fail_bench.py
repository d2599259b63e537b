"""Dramatiq in the failing workload (bench/fail_run.py).

The harness's Dramatiq adapter (`adapters.dramatiq_bench`: RedisBroker,
default middleware) with one more actor, "fail", put in the harness's actor
table so its client sends it by kind. Dramatiq's default Retries middleware
is on (20 retries, backoff from 15 s): a failure is sent to the queue's
delay queue ("default.DQ"), whose messages stay in its `.msgs` hash until
they are due and moved back; `filed(r)` counts that hash.
"""

from __future__ import annotations

import dramatiq
import fail_work

from adapters import dramatiq_bench

NAME = "dramatiq"
VARIANTS = {"p2t8": dramatiq_bench.VARIANTS["p2t8"]}


@dramatiq.actor(queue_name=dramatiq_bench.QUEUE)
def fail(i: int) -> None:
    fail_work.attempt()


dramatiq_bench.ACTORS[fail_work.KIND] = fail


describe, worker_commands = fail_work.on_harness_adapter(
    dramatiq_bench, __name__, "default Retries middleware (max_retries=20, min_backoff=15 s)"
)


Client = dramatiq_bench.Client  # ACTORS[kind].send(arg)


def filed(r) -> int:
    """Messages in the delay queue (not yet due)."""
    return r.hlen(f"dramatiq:{dramatiq_bench.QUEUE}.DQ.msgs")
