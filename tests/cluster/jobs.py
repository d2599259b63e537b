"""Jobs and the APP config of the cluster tests: the production-Redis drain's jobs on two
queues whose slots live on different primaries of the local cluster.

`default`'s keys hash to slot 270 and `critical`'s to 13508: the first and
the last of the three primaries `redis-cli --cluster create` makes.  Runs are
counted in the plain side-effect Redis of `$COGWORKER_TEST_REDIS_URL`.
"""

from __future__ import annotations

import cogworker
from cogworker import Job
from tests.production_redis.jobs import Dies, Drain, FailsOnce, Unique, record

QUEUES = ("critical", "default")

#: Both queues, short timings, every job's status tracked.
config = cogworker.Config(
    queues=QUEUES,
    poll_interval=0.2,
    heartbeat_interval=0.5,
    orphan_threshold=3.0,
    shutdown_timeout=2.0,
    concurrency=10,
    track_status=True,
    log_level="WARNING",
)


class CriticalDrain(Drain, queue="critical"):
    """`Drain` on the critical queue."""


class CriticalFailsOnce(FailsOnce, queue="critical"):
    """`FailsOnce` on the critical queue."""


class CriticalDies(Dies, queue="critical"):
    """`Dies` on the critical queue."""


class CriticalUnique(Unique, queue="critical"):
    """`Unique` on the critical queue."""


class Doubles(Drain, queue="critical", keep_result=60):
    """Answers twice its number (a kept result), counting its runs."""

    def perform(self, number: int) -> int:  # type: ignore[override]  # a result, unlike Drain
        super().perform(number)
        return 2 * number


class BatchDone(Drain):
    """A batch's success callback, on the default queue: counts its run."""

    def perform(self, bid: str) -> None:  # type: ignore[override]  # a callback's argument
        record("batch_done", self.jid)


class ChainAsync(Job, queue="critical"):
    """An async job: counts its run, then enqueues the chain's next link (`n - 1`, down to
    0) on the other queue with `aperform_async` (see `shortcuts_app`)."""

    async def perform(self, n: int) -> None:
        record("chain", self.jid)
        if n > 0:
            await LINKS[n % 2].aperform_async(n - 1)


class ChainAsyncDefault(ChainAsync, queue="default"):
    """`ChainAsync` on the default queue."""


#: The chain's links, taking turns: odd numbers go to the default queue.
LINKS = (ChainAsync, ChainAsyncDefault)
