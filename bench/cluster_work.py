"""The cluster workload's rules (issue #22): the harness's no-op, spread over three queues.

On a Redis Cluster a queue is one slot, so one queue is one shard's work. To
let the shards of the local 3-primary cluster share a drain, the jobs go
round-robin onto three queues whose `{q:Q}` slots fall in the three thirds
of the slot range that `redis-cli --cluster create` gives three primaries
(0-5460, 5461-10922, 10923-16383): `bench` (the adapter's own queue, slot
7931), `bench-a` (12853) and `bench-b` (598). bench/cluster_bench.py checks
that they do land on three different primaries before it measures.

The workers serve the three queues with weights 100, 101, 102: equal weights
would mean strict order (the first queue drained before the second is
touched, one shard at a time), any other weights a weighted random order on
every fetch, here near-even shares. The job is the adapter's `Noop` (the
harness's one `INCR`), subclassed per queue: imported by the workers as
`cluster_work.NoopA`, from bench/ on their path (bench/cogworker_bench.py).
"""

from __future__ import annotations

import cogworker_bench
import common
from cogworker_bench import Noop

import cogworker
from cogworker.adapters import redis_keys

#: The queues, in the order jobs are dealt onto them.
QUEUES = (cogworker_bench.QUEUE, "bench-a", "bench-b")
#: Not all equal, so that every fetch draws its own order (see the module's docstring).
WEIGHTS = (100, 101, 102)


class NoopA(Noop, queue=QUEUES[1]):
    """The adapter's no-op on the second queue."""


class NoopB(Noop, queue=QUEUES[2]):
    """The adapter's no-op on the third queue."""


#: The job class of each queue; one queue is the adapter's plain workload.
SPREAD: tuple[type[cogworker.Job], ...] = (Noop, NoopA, NoopB)
ONE_QUEUE: tuple[type[cogworker.Job], ...] = (Noop,)


def queue_flags(classes: tuple[type[cogworker.Job], ...]) -> list[str]:
    """`cogworker work` options serving the queues of `classes` (none: the adapter's own)."""
    if len(classes) == 1:
        return []
    return [arg for i in range(len(classes)) for arg in ("-q", f"{QUEUES[i]},{WEIGHTS[i]}")]


class SpreadClient(cogworker_bench.Client):
    """The adapter's client, dealing its no-ops round-robin onto the queues of `classes`:
    job number i on `classes[i % k]`, and each bulk call of 1,000 onto the next queue."""

    def __init__(self, url: str, variant: str, classes: tuple[type[cogworker.Job], ...]):
        super().__init__(url, variant)
        self.classes = classes

    def enqueue(self, kind: str, arg: int) -> None:
        self.client.enqueue(self.classes[arg % len(self.classes)], arg)

    def enqueue_bulk(self, kind: str, args) -> None:
        for number, part in enumerate(common.chunks(list(args), common.BULK_BATCH)):
            job = self.classes[number % len(self.classes)]
            self.client.enqueue_many(job, [[a] for a in part])


#: Bytes a control push carries: a no-op job's payload is 170 (class, args, jid, queue, times).
PLAIN_PAYLOAD = b"x" * 170


class PlainPush(common.SyncClient):
    """The control: one redis-py `LPUSH` per job onto the same queues' lists, round-robin,
    without cogworker: what a round trip to the topology costs by itself."""

    def __init__(self, connect, queues: tuple[str, ...]):
        """`connect()`: a new redis-py client of the topology."""
        super().__init__("", "plain")
        self.client, self.keys = connect(), [redis_keys.queue(q) for q in queues]

    def enqueue(self, kind: str, arg: int) -> None:
        self.client.lpush(self.keys[arg % len(self.keys)], PLAIN_PAYLOAD)

    def close(self) -> None:
        self.client.close()
