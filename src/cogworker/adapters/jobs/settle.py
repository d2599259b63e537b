"""Settle: a run's outcome written in one script with taking the job off the list it
was on, and only if it was still there (see settle.lua, ack_many.lua, retry_many.lua).

With `replication` asking for replicas, each write ends with a WAIT; one
that reached too few is told to `shortfalls` (the outcome stands on the
primary: a failover that loses it runs the job again, never zero times).

A job keeping its result has it written by the same script (`adapters.results`),
its jid index refreshed in the same pipeline, before it; so has a job whose status,
attempt or run of its own the script writes (`job_records.settled_index`):
all of them in its queue's slot.

The same scripts count each end in its queue's counters, keep each run in its
class's history on its queue and add it to its class's metrics, all in its
queue's slot (`adapters.counters`, `tracking.class_history` and
`adapters.class_metrics` read them).  What needn't be written with every
run is written at most once a `REGISTER_EVERY` per store: the queue joins
the registry of parts (in the same pipeline, ahead of the scripts), and
the scripts refresh a class's total TTL and registry entry.  A batch's plain
acks are one `ack_many` per queue, its plain retries one `retry_many` per
queue, in the same pipeline: each settlement's write is built by
`adapters.jobs.settle_writes`, which joins the entries of one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import attrs

from cogworker.adapters import durable_writes, jid_index, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_events import event_target
from cogworker.adapters.job_records import settled_index
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.jobs.settle_writes import Placement, calls_of, settle_call, write_of
from cogworker.adapters.jobs.status_marks import Mark, queue_mark
from cogworker.adapters.redis_client import RedisClient, RedisPipeline
from cogworker.adapters.registrations import Registrations
from cogworker.adapters.replication import Replication, ShortfallLog
from cogworker.adapters.results import queue_indexes

Registered = TypeVar("Registered", str, tuple[str, str])


@attrs.define
class SettleStore:
    """Settlements on one Redis."""

    client: RedisClient
    retention: Retention = attrs.field(factory=Retention)
    #: The replicas every outcome waits for, and where a shortfall is told.
    replication: Replication = attrs.field(factory=Replication)
    shortfalls: ShortfallLog | None = None
    #: Called after writing an outcome that appended a batch event (wakes the batch mover).
    on_batch_event: Callable[[], None] | None = None
    #: When this store last registered each queue's part, and refreshed each (queue, class).
    _registered: Registrations[str | tuple[str, str]] = attrs.field(
        factory=Registrations, init=False
    )

    def settle(self, identity: str | None, order: SettleOrder, now: float) -> bool:
        """Write a run's outcome; False if the job was no longer `identity`'s (nothing written).

        `identity` None is basic fetch: no in-progress list to check.
        """
        outcome = order.with_batch().outcome
        fetched = order.fetched
        holder = keys.in_progress(fetched.queue, identity or "")
        return self.settle_from(
            holder, fetched.raw, fetched.queue, identity is not None, outcome, now
        )

    def settle_many(
        self,
        identity: str | None,
        orders: Sequence[SettleOrder],
        now: float,
        *,
        working: Mapping[str, Mark] | None = None,
    ) -> list[bool]:
        """Write many outcomes in one round trip; see `settle`.

        Plain acks of one queue share one script call, and so do plain retries (their
        counters, class history trims and metrics written once per call: `settle_writes`);
        every other outcome is a `settle` of its own.
        `working`: tracked jobs that started (jid: its queue and when), marked working first.
        """
        orders = [order.with_batch() for order in orders]
        pipe = pipelines.pipeline(self.client)
        queues = {order.fetched.queue for order in orders}
        parts = self._queue_parts(pipe, queues, now)
        indexed = queue_indexes(pipe, [(o.outcome.jid, o.outcome.result) for o in orders])
        # None for an ack writing none of the job's own records (untracked, no own history).
        records = [settled_index(o.outcome, o.fetched.queue, self.retention) for o in orders]
        indexed += jid_index.queue_indexes(pipe, records)
        refreshes = self._due_classes([order.outcome for order in orders], now)
        marks = working or {}
        for jid, (queue, started_at) in marks.items():
            queue_mark(pipe, queue, jid, "working", started_at, self.retention.status_ttl)
        placed = {q: self._placed(identity, q, now, refreshes) for q in queues}
        calls = calls_of([write_of(o, placed[o.fetched.queue]) for o in orders])
        for call, _ in calls:
            call.queue(pipe)
        # The parts' SADD, the jid indexes' SETs and the marks' replies (an HSET's and an
        # EXPIRE's each) come first.
        replies = self._run(pipe)[bool(parts) + indexed + 2 * len(marks) :]
        self._registered.done([*parts, *refreshes], now)
        written = [False] * len(orders)
        for (_, indexes), reply in zip(calls, replies, strict=True):
            # A joined call answers per entry, a settle with one flag.
            flags = reply if isinstance(reply, list) else [reply]
            for i, flag in zip(indexes, flags, strict=True):
                written[i] = bool(flag)
        self._told_events([o.outcome for o, w in zip(orders, written, strict=True) if w])
        return written

    def settle_from(
        self, holder: str, entry: bytes, queue: str, owned: bool, outcome: OutcomeRecord, now: float
    ) -> bool:
        """Write `outcome` for `entry` of the list `holder` (checked only when `owned`), a
        job of `queue`."""
        refreshes = self._due_classes([outcome], now)
        at = Placement(
            holder=holder, owned=owned, now=now, retention=self.retention, refreshes=refreshes
        )
        order = SettleOrder(fetched=Fetched(queue=queue, raw=entry), outcome=outcome)
        call = settle_call(order, at)
        index = settled_index(outcome, queue, self.retention)
        registered = not self._not_registered({queue}, now)
        if not (self.replication.replicas or outcome.result or index) and registered:
            reply = call.run(self.client)
            self._registered.done(refreshes, now)
        else:
            pipe = pipelines.pipeline(self.client)
            parts = self._queue_parts(pipe, {queue}, now)
            queue_indexes(pipe, [(outcome.jid, outcome.result)])
            jid_index.queue_indexes(pipe, [index])
            call.queue(pipe)
            *_, reply = self._run(pipe)
            self._registered.done([*parts, *refreshes], now)
        if reply:
            self._told_events([outcome])
        return bool(reply)

    def _placed(
        self, identity: str | None, queue: str, now: float, refreshes: list[tuple[str, str]]
    ) -> Placement:
        """Where a settlement of a job of `queue` fetched by `identity` is written."""
        holder = keys.in_progress(queue, identity or "")
        owned = identity is not None
        return Placement(
            holder=holder, owned=owned, now=now, retention=self.retention, refreshes=refreshes
        )

    def _told_events(self, outcomes: Sequence[OutcomeRecord]) -> None:
        """Wake the batch mover if any of `outcomes` (written) appended a batch event."""
        if self.on_batch_event is not None and any(event_target(o, o.queue)[1] for o in outcomes):
            self.on_batch_event()

    def _due_classes(self, outcomes: Sequence[OutcomeRecord], now: float) -> list[tuple[str, str]]:
        """The (queue, class) pairs of `outcomes`' runs due for a refresh."""
        pairs = {(o.sample.queue, o.class_name) for o in outcomes if o.sample}
        return self._not_registered(pairs, now)

    def _not_registered(self, items: set[Registered], now: float) -> list[Registered]:
        """Those of `items` this store hasn't registered for REGISTER_EVERY, sorted."""
        return cast("list[Registered]", self._registered.due(sorted(items), now))

    def _queue_parts(self, pipe: RedisPipeline, queues: set[str], now: float) -> list[str]:
        """Queue the registration of the `queues` settlements write parts on, when due
        (before the scripts: a reader then never misses a part); the queues registered."""
        due = self._not_registered(queues, now)
        if due:
            pipe.sadd(keys.PARTS, *due)
        return due

    def _run(self, pipe: RedisPipeline) -> list[Any]:
        """Run `pipe` followed by the WAIT for replicas, if any; the writes' replies."""
        replies, short = durable_writes.run(self.client, pipe, self.replication)
        if self.shortfalls is not None and self.replication.replicas:
            self.shortfalls.record(short)
        return replies
