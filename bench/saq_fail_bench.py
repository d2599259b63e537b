"""SAQ in the failing workload (bench/fail_run.py).

The harness's SAQ adapter (`adapters.saq_bench`) with the function "fail"
(its client enqueues by function name). SAQ retries only when asked, per
job: `retries=25, retry_delay=15` given at enqueue (its defaults, 1 attempt
and 0 s, would not retry, or would requeue at once). A failure is filed in
the queue's `incomplete` sorted set with its due time as score (queued jobs
have score 0), which `filed(r)` counts.
"""

from __future__ import annotations

import fail_work

from adapters import saq_bench

NAME = "saq"
VARIANTS = {"p2c10": saq_bench.VARIANTS["p2c10"]}


async def fail(ctx, *, i: int) -> None:
    fail_work.attempt()


def settings_c10() -> dict:
    return {**saq_bench._settings(VARIANTS["p2c10"][1]), "functions": [fail]}


RETRY = f"enqueued with retries={fail_work.RETRIES}, retry_delay={fail_work.RETRY_DELAY:g} s"
describe, worker_commands = fail_work.on_harness_adapter(saq_bench, __name__, RETRY)


class Client(saq_bench.Client):
    async def aenqueue(self, kind: str, arg: int) -> None:
        await self.queue.enqueue(
            kind, i=arg, retries=fail_work.RETRIES, retry_delay=fail_work.RETRY_DELAY
        )


def filed(r) -> int:
    """Jobs in `incomplete` with a due time (score > 0): waiting for their retry."""
    return r.zcount("saq:default:incomplete", 1, "+inf")
