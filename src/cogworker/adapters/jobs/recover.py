"""Recover: the jobs of a stopping or gone process back on their queues, and the jobs
that keep coming back (repeat orphans, repeat hand-backs) or can't be read filed in
dead instead."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from typing import Literal

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_events import entry_event_target
from cogworker.adapters.jobs.fetch import FetchStore
from cogworker.adapters.jobs.left_lists import LeftList, left_lists
from cogworker.adapters.jobs.retention import ORPHANINGS_TTL, Retention
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
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
    """Per readable entry (SHA1, jid, "1" if still running), as requeue.lua takes them.

    Payloads are read here, not in Lua: Redis's cjson refuses some that
    Python wrote (a lone surrogate, deep nesting).  An unreadable one is
    left out, and the script parks it.
    """
    told: list[str] = []
    for raw in set(entries):
        decoded = payload.decode(raw)
        if is_successful(decoded):
            running_now = "1" if raw in running else "0"
            told += (hashlib.sha1(raw, usedforsecurity=False).hexdigest(), decoded.unwrap().jid,
                     running_now)  # fmt: skip
    return told


@attrs.define
class RecoverStore:
    """Requeues and burials on one Redis."""

    client: RedisClient
    retention: Retention = attrs.field(factory=Retention)

    def lists_of(self, identity: str, also: Iterable[str] = ()) -> list[str]:
        """The queues `identity` may hold in-progress lists on: those of its set
        (`keys.process_queues`) and `also` (configured, or found by a scan)."""
        members = self.client.smembers(keys.process_queues(identity))
        return sorted({as_bytes(member).decode() for member in members} | set(also))

    def requeue_own(
        self, identity: str, also: Iterable[str] = (), *, running: Collection[bytes] = (),
        max_handbacks: int,
    ) -> int:  # fmt: skip
        """At shutdown: put `identity`'s own unfinished jobs back on their queues, a list
        at a time (`lists_of`, with `also`); how many.

        The `running` payloads are handed back unfinished: each counts a
        hand-back, and one handed back more than `max_handbacks` times is
        parked for the reconciler to file in dead instead.
        """
        limits = ParkLimits(max_handbacks=max_handbacks)
        return sum(
            self._requeue(identity, queue, limits, running=running)[0]
            for queue in self.lists_of(identity, also)
        )

    def recover_all(
        self, identity: str, also: Iterable[str] = (), *, max_orphanings: int, forget: bool
    ) -> tuple[int, int]:
        """Every in-progress list of a gone process (`lists_of`, with `also`) recovered, one
        queue's at a time in its slot (`recover`): (requeued, parked) in all.  With
        `forget`, each queue leaves the process's set once its list is empty (a reconciler
        cut short in between recovers that list again, finding it empty)."""
        requeued, parked = 0, 0
        for queue in self.lists_of(identity, also):
            back, kept = self.recover(identity, queue, max_orphanings=max_orphanings)
            requeued, parked = requeued + back, parked + kept
            if forget:
                self.client.srem(keys.process_queues(identity), queue)
        return requeued, parked

    def recover(self, identity: str, queue: str, *, max_orphanings: int) -> tuple[int, int]:
        """A gone process's jobs on its list of `queue` back on that queue: (requeued,
        parked), counting an orphaning for each.

        Only once `ProcessRegistry.judge_gone` said the process is gone (or
        for this process's own lists, once it learns it was declared gone).  A
        list recovered already is empty: (0, 0).
        """
        limits = ParkLimits(max_orphanings=max_orphanings)
        return self._requeue(identity, queue, limits, recovery=True)

    def _requeue(
        self,
        identity: str,
        queue: str,
        limits: ParkLimits,
        *,
        recovery: bool = False,
        running: Collection[bytes] = (),
    ) -> tuple[int, int]:
        held = FetchStore(self.client).in_progress(identity, queue)
        if not held:
            return 0, 0
        # No worker fetches the empty queue name's jobs (a migrated entry naming no queue):
        # every one of them is parked, to be filed in dead.
        told = _told_entries(held, running) if queue else []
        counters = [  # per entry told (SHA1, jid, running): its two counters
            key
            for jid in told[1::3]
            for key in (keys.orphanings(queue, jid), keys.handbacks(queue, jid))
        ]
        pipe = pipelines.pipeline(self.client)
        # Its part first: a reconciler reads the parking lists of the parts.
        if queue:
            pipe.sadd(keys.PARTS, queue)
        scripts.REQUEUE.queue(
            pipe,
            (
                keys.in_progress(queue, identity),
                keys.queue(queue),
                keys.repeat_orphans(queue),
                keys.repeat_handbacks(queue),
                *counters,
            ),
            (
                "1" if recovery else "0",
                limits.max_orphanings,
                ORPHANINGS_TTL,
                limits.max_handbacks,
                *told,
            ),
        )
        if queue:  # registered after the jobs are back (see move_due.lua)
            pipe.sadd(keys.QUEUES, queue)
        requeued, parked = scripts.run_pipeline(self.client, pipe)[bool(queue)]
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
        pipe = pipelines.pipeline(self.client)
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
