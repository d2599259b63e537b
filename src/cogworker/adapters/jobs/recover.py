"""Recover: the jobs of a stopping or gone process back on their queues, and the jobs
that keep coming back (repeat orphans, repeat hand-backs) or can't be read filed in
dead instead."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from typing import Literal

import attrs
import redis
from returns.pipeline import is_successful

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.batch_events import entry_event_target
from cogworker.adapters.jobs.fetch import FetchStore
from cogworker.adapters.jobs.left_lists import LeftList, left_lists
from cogworker.adapters.jobs.retention import ORPHANINGS_TTL, Retention
from cogworker.adapters.parts import MIGRATED
from cogworker.adapters.results import queue_indexes, result_args, result_key
from cogworker.domain import payload
from cogworker.domain.results import Kept


@attrs.frozen(kw_only=True)
class ParkLimits:
    """The limits a requeue parks by (see requeue.lua): how many orphanings and unfinished
    hand-backs a job may have before it is parked."""

    max_orphanings: int = 0
    max_handbacks: int = 0


def _told_entries(entries: Iterable[bytes], running: Collection[bytes]) -> list[str]:
    """Per readable entry (SHA1, queue, jid, "1" if still running), as requeue.lua takes them.

    Payloads are read here, not in Lua: Redis's cjson refuses some that
    Python wrote (a lone surrogate, deep nesting).  An unreadable one is
    left out, and the script parks it.
    """
    told: list[str] = []
    for raw in set(entries):
        decoded = payload.decode(raw)
        if is_successful(decoded):
            job = decoded.unwrap()
            running_now = "1" if raw in running else "0"
            told += (
                hashlib.sha1(raw, usedforsecurity=False).hexdigest(),
                job.queue,
                job.jid,
                running_now,
            )
    return told


def _entry_keys(told: Sequence[str]) -> list[str]:
    """Per told entry (SHA1, queue, jid, running), its orphanings and hand-backs counters
    and its queue's two parking lists."""
    return [
        key
        for queue, jid in zip(told[1::4], told[2::4], strict=True)
        for key in (
            keys.orphanings(queue, jid),
            keys.handbacks(queue, jid),
            keys.repeat_orphans(queue),
            keys.repeat_handbacks(queue),
        )
    ]


@attrs.define
class RecoverStore:
    """Requeues and burials on one Redis."""

    client: redis.Redis
    retention: Retention = attrs.field(factory=Retention)

    def requeue_own(
        self, identity: str, *, running: Collection[bytes] = (), max_handbacks: int
    ) -> int:
        """At shutdown: put `identity`'s own unfinished jobs back on their queues; how many.

        The `running` payloads are handed back unfinished: each counts a
        hand-back, and one handed back more than `max_handbacks` times is
        parked for the reconciler to file in dead instead.
        """
        requeued, _ = self._requeue(
            identity, ParkLimits(max_handbacks=max_handbacks), running=running
        )
        return requeued

    def recover(self, identity: str, *, max_orphanings: int) -> tuple[int, int]:
        """A gone process's jobs back on their queues: (requeued, parked), counting an
        orphaning for each.

        Only once `ProcessRegistry.judge_gone` said the process is gone (or
        for this process's own list, once it learns it was declared gone).  A
        list recovered already is empty: (0, 0).
        """
        return self._requeue(identity, ParkLimits(max_orphanings=max_orphanings), recovery=True)

    def _requeue(
        self,
        identity: str,
        limits: ParkLimits,
        *,
        recovery: bool = False,
        running: Collection[bytes] = (),
    ) -> tuple[int, int]:
        told = _told_entries(FetchStore(self.client).in_progress(identity), running)
        queues = sorted(set(told[1::4]))  # per entry: SHA1, queue, ...
        pipe = self.client.pipeline(transaction=False)
        # Parts first: a reconciler reads the parking lists of the parts.
        if queues:
            pipe.sadd(keys.PARTS, *queues)
        scripts.REQUEUE.queue(
            pipe,
            (keys.in_progress(identity), keys.repeat_orphans(MIGRATED), *_entry_keys(told)),
            (
                "1" if recovery else "0",
                limits.max_orphanings,
                keys.QUEUE_HEAD,
                keys.QUEUE_TAIL,
                ORPHANINGS_TTL,
                limits.max_handbacks,
                *told,
            ),
        )
        # Registered after the jobs are back (see move_due.lua).
        for queue in queues:
            pipe.sadd(keys.QUEUES, queue)
        requeued, parked = scripts.run_pipeline(self.client, pipe)[bool(queues)]
        return int(requeued), int(parked)

    def parked(self, name: str) -> list[LeftList]:
        """The queues' non-empty parking lists of `name` ("repeat_orphans" or
        "repeat_handbacks"): jobs waiting to be filed in their queue's dead set."""
        return left_lists(self.client, [name])

    def bury(
        self,
        source: str,
        kind: Literal["zset", "list", "taken"],
        entry: bytes,
        filed: str,
        now: float,
        jid: str | None = None,
        result: Kept | None = None,
        queue: str = "",
    ) -> bool:
        """File `entry` of `source` in `queue`'s dead set as `filed`; True if this call did.

        With `jid` (a job of `queue`), the job's orphanings and hand-backs counters go
        too (a buried repeat orphan or hand-back), and its `result` when it keeps one
        (its jid index written first, in the same round trip).  The queue's part is
        registered before (a reader merging the dead sets never misses it).
        """
        counters = [keys.orphanings(queue, jid), keys.handbacks(queue, jid)] if jid else []
        events, event = entry_event_target(entry, "dead", queue)
        result_at = result_key(jid or "", result, queue)
        bury_keys = (source, keys.dead(queue), events, result_at, keys.located(queue), *counters)
        bury_args = (
            kind, entry, now, filed, *self.retention.dead_trim(now), event, *result_args(result),
        )  # fmt: skip
        pipe = self.client.pipeline(transaction=False)
        if queue:  # the part of the empty queue name is always read
            pipe.sadd(keys.PARTS, queue)
        if result is not None and jid is not None:
            queue_indexes(pipe, [(jid, result)])
        scripts.BURY.queue(pipe, bury_keys, bury_args)
        return bool(scripts.run_pipeline(self.client, pipe)[-1])

    def bury_unreadable(
        self,
        holder: tuple[str, Literal["zset", "list"]] | None,
        entry: bytes,
        problem: payload.PayloadError,
        *,
        jid: str,
        now: float,
        queue: str = "",
    ) -> bool:
        """File an entry that isn't a job in dead, its text kept, under a new `jid`: in the
        dead set of `queue`, the queue whose list or set held it ("": the part of the empty
        queue name, for one of no queue's).

        `holder`: the set or list it is taken off; None when the caller took
        it already (basic fetch).
        """
        filed = payload.unparseable_entry(entry, problem, jid=jid, now=now)
        if holder is None:
            return self.bury(keys.dead(queue), "taken", entry, filed, now, queue=queue)
        return self.bury(*holder, entry, filed, now, queue=queue)
