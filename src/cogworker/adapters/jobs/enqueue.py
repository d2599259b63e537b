"""Enqueue: jobs onto their queues, now or into the scheduled set for later, and due
jobs of the scheduled and retry sets onto their queues when their time comes.

What a push sends (its scripts' keys and arguments, queued on a pipeline of
either client) is written once, in the `queue_*` functions; `EnqueueStore`
sends it with redis-py, `AsyncEnqueueStore` with redis.asyncio.  With
`replication` asking for replicas, every push ends with a WAIT and raises
`NotReplicatedError` when too few replicas confirmed it (the push is done
on the primary all the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import attrs
import redis
import redis.asyncio

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.jobs.status_marks import queue_mark
from cogworker.adapters.replication import Replication
from cogworker.adapters.replies import as_bytes


@attrs.frozen(kw_only=True)
class UniquePush:
    """A unique job to push only if its lock is free (taking it for `jid`)."""

    queue: str
    payload: str
    jid: str
    lock: str
    ttl: float
    #: When to run it (scheduled), or None for now.
    at: float | None = None
    #: Its status is tracked: marked queued by the push itself.
    tracked: bool = False


def push_call(queue: str, payloads: Sequence[str]) -> tuple[list[str], list[str]]:
    """The keys and arguments of the `push` script putting `payloads` on `queue`."""
    return [keys.queue(queue), keys.QUEUES], [queue, *payloads]


def queue_push_all(
    pipe: scripts.Pipeline,
    groups: Mapping[str, Sequence[str]],
    scheduled: Sequence[tuple[float, str]],
    *,
    queued: Sequence[str],
    now: float,
    status_ttl: float,
) -> None:
    """Queue on `pipe` the marks of tracked jids `queued` since `now` (kept `status_ttl`
    seconds), then the pushes onto queues and into the scheduled set: marked after its
    push, a job a fast worker finished meanwhile would read queued again."""
    for jid in queued:
        queue_mark(pipe, jid, "queued", now, status_ttl)
    for queue, payloads in groups.items():
        scripts.PUSH.queue(pipe, *push_call(queue, payloads))
    if scheduled:
        pipe.zadd(keys.SCHEDULE, {payload: at for at, payload in scheduled})


def queue_push_unique(
    pipe: scripts.Pipeline, pushes: Sequence[UniquePush], *, now: float, status_ttl: float
) -> None:
    """Queue on `pipe` the pushes of unique jobs, each only if its lock is free (a tracked
    one marked queued since `now`, kept `status_ttl` seconds, by the same script)."""
    for push in pushes:
        target = keys.SCHEDULE if push.at is not None else keys.queue(push.queue)
        scripts.PUSH_UNIQUE.queue(
            pipe,
            (target, keys.QUEUES, push.lock, keys.status(push.jid)),
            (
                push.queue,
                push.payload,
                push.jid,
                int(push.ttl * 1000),
                push.at or "",
                "1" if push.tracked else "0",
                int(status_ttl),
                now,
            ),
        )


@attrs.define
class EnqueueStore:
    """Pushes on one Redis."""

    client: redis.Redis
    #: How long a tracked job's "queued" status is kept.
    status_ttl: float = 30 * 60
    #: The replicas every push waits for.
    replication: Replication = attrs.field(factory=Replication)

    def push(self, queue: str, payloads: Sequence[str]) -> None:
        """Put payloads on `queue` (one round trip)."""
        if not self.replication.replicas:
            scripts.PUSH(self.client, *push_call(queue, payloads))
            return
        pipe = self.client.pipeline(transaction=False)
        scripts.PUSH.queue(pipe, *push_call(queue, payloads))
        self.replication.queue_wait(pipe)
        self.replication.confirmed(scripts.run_pipeline(self.client, pipe))

    def push_all(
        self,
        groups: Mapping[str, Sequence[str]],
        scheduled: Sequence[tuple[float, str]],
        *,
        queued: Sequence[str] = (),
        now: float = 0.0,
    ) -> None:
        """Push payloads onto queues and into the scheduled set, and mark tracked jids
        `queued`, in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        queue_push_all(pipe, groups, scheduled, queued=queued, now=now, status_ttl=self.status_ttl)
        if pipe.command_stack:
            self.replication.queue_wait(pipe)
            self.replication.confirmed(scripts.run_pipeline(self.client, pipe))

    def push_unique(self, pushes: Sequence[UniquePush], now: float) -> list[int]:
        """Push unique jobs whose locks are free (one round trip): 1 where pushed, 0 where
        another jid holds the lock, 2 where this jid does (pushed before: nothing done)."""
        pipe = self.client.pipeline(transaction=False)
        queue_push_unique(pipe, pushes, now=now, status_ttl=self.status_ttl)
        self.replication.queue_wait(pipe)
        replies = self.replication.confirmed(scripts.run_pipeline(self.client, pipe))
        return [int(reply) for reply in replies]

    def due(self, sorted_set: str, now: float, limit: int) -> list[bytes]:
        """Entries of a scheduled or retry set whose time has come, oldest first."""
        return [
            as_bytes(entry)
            for entry in cast(
                "list[bytes | str]", self.client.zrangebyscore(sorted_set, "-inf", now, 0, limit)
            )
        ]

    def move_due(self, sorted_set: str, moves: Sequence[tuple[bytes, str, str]]) -> list[bool]:
        """Move (entry, queue, payload) triples onto their queues; True where this call did."""
        pipe = self.client.pipeline(transaction=False)
        for entry, queue, payload in moves:
            scripts.MOVE_DUE.queue(
                pipe, (sorted_set, keys.queue(queue), keys.QUEUES), (entry, payload, queue)
            )
        return [bool(reply) for reply in scripts.run_pipeline(self.client, pipe)]


@attrs.define
class AsyncEnqueueStore:
    """`EnqueueStore`'s pushes on one Redis, through a redis.asyncio client."""

    client: redis.asyncio.Redis
    #: How long a tracked job's "queued" status is kept.
    status_ttl: float = 30 * 60
    #: The replicas every push waits for.
    replication: Replication = attrs.field(factory=Replication)

    async def push(self, queue: str, payloads: Sequence[str]) -> None:
        """Put payloads on `queue` (one round trip)."""
        if not self.replication.replicas:
            await scripts.PUSH.run_async(self.client, *push_call(queue, payloads))
            return
        pipe = self.client.pipeline(transaction=False)
        scripts.PUSH.queue(pipe, *push_call(queue, payloads))
        self.replication.queue_wait(pipe)
        self.replication.confirmed(await scripts.run_pipeline_async(self.client, pipe))

    async def push_all(
        self,
        groups: Mapping[str, Sequence[str]],
        scheduled: Sequence[tuple[float, str]],
        *,
        queued: Sequence[str] = (),
        now: float = 0.0,
    ) -> None:
        """See `EnqueueStore.push_all`."""
        pipe = self.client.pipeline(transaction=False)
        queue_push_all(pipe, groups, scheduled, queued=queued, now=now, status_ttl=self.status_ttl)
        if pipe.command_stack:
            self.replication.queue_wait(pipe)
            self.replication.confirmed(await scripts.run_pipeline_async(self.client, pipe))

    async def push_unique(self, pushes: Sequence[UniquePush], now: float) -> list[int]:
        """See `EnqueueStore.push_unique`."""
        pipe = self.client.pipeline(transaction=False)
        queue_push_unique(pipe, pushes, now=now, status_ttl=self.status_ttl)
        self.replication.queue_wait(pipe)
        replies = self.replication.confirmed(await scripts.run_pipeline_async(self.client, pipe))
        return [int(reply) for reply in replies]
