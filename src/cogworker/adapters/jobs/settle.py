"""Settle: a run's outcome written in one script with taking the job off the list it
was on, and only if it was still there (see settle.lua and ack_many.lua).

With `replication` asking for replicas, each write ends with a WAIT; one
that reached too few is told to `shortfalls` (the outcome stands on the
primary: a failover that loses it runs the job again, never zero times).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import DAY_COUNTER_TTL, Retention
from cogworker.adapters.jobs.status_marks import queue_mark
from cogworker.adapters.replication import Replication, ShortfallLog
from cogworker.domain.stats import day_of

ScriptArgs = tuple[bytes | str | int | float, ...]
#: The counter of an end that isn't a success or a failure (a failure counts in `failed`).
_COUNTERS = {"cancel": "cancelled", "expire": "expired"}


@attrs.frozen(kw_only=True)
class SettleOrder:
    """An outcome to write for a job as it was fetched."""

    fetched: Fetched
    outcome: OutcomeRecord


@attrs.define
class SettleStore:
    """Settlements on one Redis."""

    client: redis.Redis
    retention: Retention = attrs.field(factory=Retention)
    #: The replicas every outcome waits for, and where a shortfall is told.
    replication: Replication = attrs.field(factory=Replication)
    shortfalls: ShortfallLog | None = None

    def settle(self, identity: str | None, order: SettleOrder, now: float) -> bool:
        """Write a run's outcome; False if the job was no longer `identity`'s (nothing written).

        `identity` None is basic fetch: no in-progress list to check.
        """
        holder = keys.in_progress(identity or "")
        return self.settle_from(holder, order.fetched.raw, identity is not None, order.outcome, now)

    def settle_many(
        self,
        identity: str | None,
        orders: Sequence[SettleOrder],
        now: float,
        *,
        working: Mapping[str, float] | None = None,
    ) -> list[bool]:
        """Write many outcomes in one round trip; see `settle`.

        Plain acks share one script call (its counters and history lists
        written once per call); every other outcome is a `settle` of its own.
        `working`: tracked jobs that started (jid: when), marked working first.
        """
        pipe = self.client.pipeline(transaction=False)
        marks = working or {}
        for jid, started_at in marks.items():
            queue_mark(pipe, jid, "working", started_at, self.retention.status_ttl)
        holder = keys.in_progress(identity or "")
        plain: list[int] = []
        others: list[int] = []
        for i, order in enumerate(orders):
            (plain if order.outcome.is_plain_ack else others).append(i)
        if plain:
            self._queue_acks(pipe, holder, identity is not None, [orders[i] for i in plain], now)
        for i in others:
            order = orders[i]
            call = self._settle_call(
                holder, order.fetched.raw, identity is not None, order.outcome, now
            )
            scripts.SETTLE.queue(pipe, *call)
        # The marks' replies (an HSET's and an EXPIRE's each) come first.
        replies = iter(self._run(pipe)[2 * len(marks) :])
        written = [False] * len(orders)
        for i, flag in zip(plain, next(replies) if plain else (), strict=True):
            written[i] = bool(flag)
        for i, reply in zip(others, replies, strict=True):
            written[i] = bool(reply)
        return written

    def settle_from(
        self, holder: str, entry: bytes, owned: bool, outcome: OutcomeRecord, now: float
    ) -> bool:
        """Write `outcome` for `entry` of the list `holder` (checked only when `owned`)."""
        call = self._settle_call(holder, entry, owned, outcome, now)
        if not self.replication.replicas:
            return bool(scripts.SETTLE(self.client, *call))
        pipe = self.client.pipeline(transaction=False)
        scripts.SETTLE.queue(pipe, *call)
        (reply,) = self._run(pipe)
        return bool(reply)

    def _run(self, pipe: redis.client.Pipeline) -> list[Any]:
        """Run `pipe` followed by the WAIT for replicas, if any; the writes' replies."""
        self.replication.queue_wait(pipe)
        replies, short = self.replication.split(scripts.run_pipeline(self.client, pipe))
        if self.shortfalls is not None and self.replication.replicas:
            self.shortfalls.record(short)
        return replies

    def _queue_acks(
        self,
        pipe: redis.client.Pipeline,
        holder: str,
        owned: bool,
        acks: Sequence[SettleOrder],
        now: float,
    ) -> None:
        day, kept = day_of(now), self.retention
        ack_keys: list[str] = [holder, keys.stat("processed"), keys.stat("processed", day)]
        ack_args: list[bytes | str | int] = [
            "1" if owned else "0",
            DAY_COUNTER_TTL,
            kept.history_per_class,
            int(kept.history_ttl),
        ]
        for ack in acks:
            ack_keys += (
                keys.orphanings(ack.outcome.jid),
                keys.handbacks(ack.outcome.jid),
                keys.class_history(ack.outcome.class_name),
            )
            ack_args += (ack.fetched.raw, ack.outcome.history)
        scripts.ACK_MANY.queue(pipe, ack_keys, ack_args)

    def _settle_call(
        self, holder: str, entry: bytes, owned: bool, outcome: OutcomeRecord, now: float
    ) -> tuple[tuple[str, ...], ScriptArgs]:
        day, kept = day_of(now), self.retention
        counter = _COUNTERS.get(outcome.kind, "failed")
        settle_keys = (
            holder,
            keys.RETRY if outcome.kind == "retry" else keys.DEAD,
            keys.stat("processed"),
            keys.stat("processed", day),
            keys.stat(counter),
            keys.stat(counter, day),
            keys.orphanings(outcome.jid),
            keys.job_attempts(outcome.jid),
            keys.history(outcome.jid),
            keys.class_history(outcome.class_name),
            keys.status(outcome.jid),
            outcome.unique_lock or keys.NO_LOCK,
            outcome.running_lock or keys.NO_LOCK,
            keys.handbacks(outcome.jid),
        )
        settle_args = (
            entry, "1" if owned else "0", outcome.kind, outcome.score, outcome.payload,
            DAY_COUNTER_TTL, *kept.dead_trim(now),
            outcome.attempt, kept.attempts_kept, int(kept.attempts_ttl),
            outcome.history, kept.history_per_job, kept.history_per_class, int(kept.history_ttl),
            outcome.status, int(kept.status_ttl), now,
            outcome.jid, outcome.unique_action, int(outcome.lock_ttl * 1000),
            "release" if outcome.running_lock else "",
            "1" if outcome.history_per_job else "0",
        )  # fmt: skip
        return settle_keys, settle_args
