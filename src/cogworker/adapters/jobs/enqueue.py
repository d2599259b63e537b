"""Enqueue: jobs onto their queues, now or into their queues' scheduled sets for later
(the due ones are moved by `adapters.jobs.due`).

A job pushed now onto its queue is one `LPUSH` (no script: the queue is its one
key); a unique or scheduled one is a script of its own.  What a push sends (its
commands' keys and arguments, queued on a pipeline of
either client) is written once, in the `queue_*` functions; `EnqueueStore`
sends it with redis-py, `AsyncEnqueueStore` with redis.asyncio.  With
`replication` asking for replicas, every push ends with a WAIT (on a
cluster, each primary's: `durable_writes`, `async_durable_writes`) and raises
`NotReplicatedError` when too few replicas confirmed it (the push is done
on the primary all the same).

A push registers its queue (the registry's SADD, right after the push) only
when its store hasn't for `REGISTER_EVERY` seconds (`Registrations`): the
registry is a global key, in another slot than the queue on Redis Cluster, and an
SADD next to every single push would cost it 60-90 % more CPU
(docs/redis-cluster.md, "Registries").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from cogworker.adapters import async_durable_writes, durable_writes, pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jid_index import JidIndex, queue_indexes
from cogworker.adapters.jobs.status_marks import queue_mark
from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient
from cogworker.adapters.registrations import Registrations
from cogworker.adapters.replication import Replication


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
    #: Its jid index, written before it, when it keeps its result or is tracked.
    index: JidIndex | None = None


def unique_queues(pushes: Sequence[UniquePush]) -> list[str]:
    """The queues unique pushes put jobs on now (a scheduled one's registers when due)."""
    return [push.queue for push in pushes if push.at is None]


def unique_scheduled(pushes: Sequence[UniquePush]) -> list[str]:
    """The queues whose scheduled sets unique pushes put jobs in."""
    return [push.queue for push in pushes if push.at is not None]


def queue_registrations(pipe: scripts.Pipeline, queues: Iterable[str]) -> None:
    """Queue on `pipe` the registration of `queues`, after the pushes onto them."""
    for name in queues:
        pipe.sadd(keys.QUEUES, name)


def queue_parts(pipe: scripts.Pipeline, queues: Sequence[str]) -> None:
    """Queue on `pipe` the registration of the parts of `queues` whose scheduled sets the
    pushes after it write: before them, so a merged read never misses a scheduled job."""
    if queues:
        pipe.sadd(keys.PARTS, *queues)


def queue_push_all(
    pipe: scripts.Pipeline,
    groups: Mapping[str, Sequence[str]],
    scheduled: Mapping[str, Sequence[tuple[float, str, str]]],
    *,
    queued: Sequence[tuple[str, str]],
    now: float,
    status_ttl: float,
    register: Sequence[str],
    indexed: Sequence[JidIndex] = (),
    parts: Sequence[str] = (),
) -> None:
    """Queue on `pipe` the jid indexes of jobs keeping their result or tracked (`indexed`),
    the parts' registration of the queues in `parts`, the marks of tracked jobs `queued`
    (queue, jid) since `now` (kept `status_ttl` seconds), then the pushes onto
    queues and into their scheduled sets (marked after its push, a job a fast worker finished
    meanwhile would read queued again), then the registration of the queues in `register`."""
    queue_indexes(pipe, indexed)
    queue_parts(pipe, parts)
    for queue, jid in queued:
        queue_mark(pipe, queue, jid, "queued", now, status_ttl)
    for queue, payloads in groups.items():
        pipe.lpush(keys.queue(queue), *payloads)
    for queue, later in scheduled.items():  # each job noted in the sets' jid index too
        entries = [item for when_payload_jid in later for item in when_payload_jid]
        scripts.SCHEDULE.queue(pipe, (keys.schedule(queue), keys.located(queue)), entries)
    queue_registrations(pipe, register)


def queue_push_unique(
    pipe: scripts.Pipeline,
    pushes: Sequence[UniquePush],
    *,
    now: float,
    status_ttl: float,
    register: Sequence[str],
    parts: Sequence[str] = (),
) -> int:
    """Queue on `pipe` the jid indexes of those keeping their result or tracked, the parts'
    registration of the queues in `parts`, then the
    pushes of unique jobs, each only if its lock is free (a tracked one marked queued since
    `now`, kept `status_ttl` seconds, by the same script), then the registration of the
    queues in `register` (a reply each, after the pushes'); how many replies came first."""
    indexed = queue_indexes(pipe, (push.index for push in pushes)) + bool(parts)
    queue_parts(pipe, parts)
    for push in pushes:
        scripts.PUSH_UNIQUE.queue(pipe, *unique_call(push, now, status_ttl))
    queue_registrations(pipe, register)
    return indexed


def unique_call(
    push: UniquePush, now: float, status_ttl: float
) -> tuple[tuple[str, ...], tuple[scripts.KeyOrArg, ...]]:
    """The keys and arguments of the `push_unique` script for `push` (without the tail of
    a job pushed now and not tracked: each argument costs the client an encoding)."""
    lock_ttl = int(push.ttl * 1000)
    if push.at is None and not push.tracked:
        return (keys.queue(push.queue), push.lock), (push.payload, push.jid, lock_ttl)
    target = keys.schedule(push.queue) if push.at is not None else keys.queue(push.queue)
    tracked = "1" if push.tracked else "0"
    return (
        (target, push.lock, keys.status(push.queue, push.jid), keys.located(push.queue)),
        (push.payload, push.jid, lock_ttl, push.at or "", tracked, int(status_ttl), now),
    )


def alone(pushes: Sequence[UniquePush], due: Sequence[str], replication: Replication) -> bool:
    """Whether `pushes` are one push needing nothing sent beside its script (no registration
    due, of a queue or a part, no jid index, no replicas to wait for): one EVALSHA, no
    pipeline."""
    return len(pushes) == 1 and not due and pushes[0].index is None and not replication.replicas


@attrs.define
class EnqueueStore:
    """Pushes on one Redis."""

    client: RedisClient
    #: How long a tracked job's "queued" status is kept.
    status_ttl: float = 30 * 60
    registrations: Registrations[str] = attrs.field(factory=Registrations)
    #: The replicas every push waits for.
    replication: Replication = attrs.field(factory=Replication)
    #: When this store last registered the part of each queue whose scheduled set it wrote.
    parts: Registrations[str] = attrs.field(factory=Registrations)

    def push(self, queue: str, payloads: Sequence[str]) -> None:
        """Put payloads on `queue` (one round trip), registering it when due."""
        due = self.registrations.due([queue])
        if not due and not self.replication.replicas:
            self.client.lpush(keys.queue(queue), *payloads)
            return
        pipe = pipelines.pipeline(self.client)
        pipe.lpush(keys.queue(queue), *payloads)
        queue_registrations(pipe, due)
        durable_writes.confirmed(self.client, pipe, self.replication)
        self.registrations.done(due)

    def push_all(
        self,
        groups: Mapping[str, Sequence[str]],
        scheduled: Mapping[str, Sequence[tuple[float, str, str]]],
        *,
        queued: Sequence[tuple[str, str]] = (),
        now: float = 0.0,
        indexed: Sequence[JidIndex] = (),
    ) -> None:
        """Push payloads onto queues and into the scheduled set, and mark tracked jids
        `queued` (and write the jid indexes `indexed` first), in one round trip."""
        if not (groups or scheduled or queued or indexed):
            return
        due, parts = self.registrations.due(groups), self.parts.due(scheduled)
        pipe = pipelines.pipeline(self.client)
        queue_push_all(
            pipe, groups, scheduled, queued=queued, now=now, status_ttl=self.status_ttl,
            register=due, indexed=indexed, parts=parts,
        )  # fmt: skip
        if len(pipe):  # (a cluster's pipeline keeps no `command_stack`)
            durable_writes.confirmed(self.client, pipe, self.replication)
        self.registrations.done(due)
        self.parts.done(parts)

    def push_unique(self, pushes: Sequence[UniquePush], now: float) -> list[int]:
        """Push unique jobs whose locks are free (one round trip): 1 where pushed, 0 where
        another jid holds the lock, 2 where this jid does (pushed before: nothing done)."""
        if not pushes:
            return []
        due = self.registrations.due(unique_queues(pushes))
        parts = self.parts.due(unique_scheduled(pushes))
        if alone(pushes, [*due, *parts], self.replication):
            return [
                int(scripts.PUSH_UNIQUE(self.client, *unique_call(pushes[0], now, self.status_ttl)))
            ]
        pipe = pipelines.pipeline(self.client)
        first = queue_push_unique(
            pipe, pushes, now=now, status_ttl=self.status_ttl, register=due, parts=parts
        )
        replies = durable_writes.confirmed(self.client, pipe, self.replication)
        self.registrations.done(due)
        self.parts.done(parts)
        return [int(reply) for reply in replies[first : first + len(pushes)]]


@attrs.define
class AsyncEnqueueStore:
    """`EnqueueStore`'s pushes on one Redis or a cluster, through a redis.asyncio client."""

    client: AsyncRedisClient
    #: How long a tracked job's "queued" status is kept.
    status_ttl: float = 30 * 60
    registrations: Registrations[str] = attrs.field(factory=Registrations)
    #: The replicas every push waits for.
    replication: Replication = attrs.field(factory=Replication)
    #: When this store last registered the part of each queue whose scheduled set it wrote.
    parts: Registrations[str] = attrs.field(factory=Registrations)

    async def push(self, queue: str, payloads: Sequence[str]) -> None:
        """See `EnqueueStore.push`."""
        due = self.registrations.due([queue])
        if not due and not self.replication.replicas:
            await self.client.lpush(keys.queue(queue), *payloads)
            return
        pipe = pipelines.pipeline_async(self.client)
        pipe.lpush(keys.queue(queue), *payloads)
        queue_registrations(pipe, due)
        await async_durable_writes.confirmed(self.client, pipe, self.replication)
        self.registrations.done(due)

    async def push_all(
        self,
        groups: Mapping[str, Sequence[str]],
        scheduled: Mapping[str, Sequence[tuple[float, str, str]]],
        *,
        queued: Sequence[tuple[str, str]] = (),
        now: float = 0.0,
        indexed: Sequence[JidIndex] = (),
    ) -> None:
        """See `EnqueueStore.push_all`."""
        if not (groups or scheduled or queued or indexed):
            return
        due, parts = self.registrations.due(groups), self.parts.due(scheduled)
        pipe = pipelines.pipeline_async(self.client)
        queue_push_all(
            pipe, groups, scheduled, queued=queued, now=now, status_ttl=self.status_ttl,
            register=due, indexed=indexed, parts=parts,
        )  # fmt: skip
        if len(pipe):  # (a cluster's pipeline keeps no `command_stack`)
            await async_durable_writes.confirmed(self.client, pipe, self.replication)
        self.registrations.done(due)
        self.parts.done(parts)

    async def push_unique(self, pushes: Sequence[UniquePush], now: float) -> list[int]:
        """See `EnqueueStore.push_unique`."""
        if not pushes:
            return []
        due = self.registrations.due(unique_queues(pushes))
        parts = self.parts.due(unique_scheduled(pushes))
        if alone(pushes, [*due, *parts], self.replication):
            call = unique_call(pushes[0], now, self.status_ttl)
            return [int(await scripts.PUSH_UNIQUE.run_async(self.client, *call))]
        pipe = pipelines.pipeline_async(self.client)
        first = queue_push_unique(
            pipe, pushes, now=now, status_ttl=self.status_ttl, register=due, parts=parts
        )
        replies = await async_durable_writes.confirmed(self.client, pipe, self.replication)
        self.registrations.done(due)
        self.parts.done(parts)
        return [int(reply) for reply in replies[first : first + len(pushes)]]
