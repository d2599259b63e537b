"""Moving jobs in Redis: push, fetch, ack, fail, requeue, move due, bury.

Each move is one script (or one pipeline of scripts) that first checks the
job is still where the caller left it, so a repeated or late call can't
duplicate or lose a job.  The store decides nothing: what to write and
where comes from the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, cast

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.domain.stats import day_of

#: Day counters are kept this long (the dashboard charts up to 90 days).
DAY_COUNTER_TTL = 400 * 86_400
#: A job's orphanings counter outlives any sane retry schedule of a crash-looper.
ORPHANINGS_TTL = 30 * 86_400

Target = Literal["retry", "dead", "discard"]


def as_bytes(value: bytes | str) -> bytes:
    """A reply as bytes (cogworker's clients don't decode, but the types allow str)."""
    return value if isinstance(value, bytes) else value.encode()


def _counters(now: float) -> tuple[str, str, str, str]:
    """The processed and failed counters a failure bumps: in total and for `now`'s day."""
    day = day_of(now)
    return (
        keys.stat("processed"),
        keys.stat("processed", day),
        keys.stat("failed"),
        keys.stat("failed", day),
    )


@attrs.frozen(kw_only=True)
class DeadSetLimits:
    """How much the dead set keeps: the newest `max_jobs`, none older than `max_age` seconds."""

    max_jobs: int = 10_000
    max_age: float = 180 * 86_400


@attrs.frozen(kw_only=True)
class UnsettledRecord:
    """A settlement handed over by a stopping process: how to settle `jid`."""

    jid: str
    kind: Literal["ack", "retry", "dead", "discard"]
    score: float = 0.0
    payload: str = ""


@attrs.frozen(kw_only=True)
class Fetched:
    """A job as taken from a queue: its payload exactly as stored (the key for ack)."""

    queue: str
    raw: bytes


@attrs.define
class JobStore:
    """Job moves on one Redis."""

    client: redis.Redis
    dead_limits: DeadSetLimits = attrs.field(factory=DeadSetLimits)

    def push(self, queue: str, payloads: Sequence[str]) -> None:
        """Put payloads on `queue` (one round trip)."""
        scripts.PUSH(self.client, (keys.queue(queue), keys.QUEUES), (queue, *payloads))

    def push_groups(self, groups: Iterable[tuple[str, Sequence[str]]]) -> None:
        """Push several queues' payloads and scheduled entries in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for queue, payloads in groups:
            scripts.PUSH.queue(pipe, (keys.queue(queue), keys.QUEUES), (queue, *payloads))
        scripts.run_pipeline(self.client, pipe)

    def schedule(self, entries: Sequence[tuple[float, str]]) -> None:
        """Add payloads to the scheduled set, each at its time."""
        self.client.zadd(keys.SCHEDULE, {payload: at for at, payload in entries})

    def fetch(self, identity: str, queues: Sequence[str], count: int) -> list[Fetched]:
        """Take up to `count` jobs into `identity`'s in-progress list, queues in the order given."""
        reply = scripts.FETCH(
            self.client, (keys.in_progress(identity), *map(keys.queue, queues)), (count,)
        )
        return [
            Fetched(queue=queues[int(reply[i]) - 1], raw=reply[i + 1])
            for i in range(0, len(reply), 2)
        ]

    def fetch_blocking(self, identity: str, queue: str, timeout: float) -> Fetched | None:
        """Wait up to `timeout` seconds for a job on `queue`, taken into the in-progress list."""
        raw = self.client.blmove(
            keys.queue(queue), keys.in_progress(identity), max(1, round(timeout))
        )
        return None if raw is None else Fetched(queue=queue, raw=as_bytes(raw))

    def pop_basic(self, queues: Sequence[str], timeout: float) -> Fetched | None:
        """Basic fetch: pop a job outright (lost if this process dies before it ends)."""
        reply = self.client.brpop([keys.queue(name) for name in queues], timeout)
        if reply is None:
            return None
        key, raw = reply
        return Fetched(queue=as_bytes(key).decode()[len(keys.QUEUE_PREFIX) :], raw=as_bytes(raw))

    def ack(self, identity: str | None, job: Fetched, jid: str, now: float) -> bool:
        """Settle a job that ran to the end; False if it was no longer `identity`'s."""
        day = day_of(now)
        written = scripts.ACK(
            self.client,
            (
                keys.in_progress(identity or ""),
                keys.stat("processed"),
                keys.stat("processed", day),
                keys.orphanings(jid),
            ),
            (job.raw, "1" if identity else "0", DAY_COUNTER_TTL),
        )
        return bool(written)

    def requeue_one(self, identity: str, job: Fetched) -> bool:
        """Put one job of `identity`'s in-progress list back at the front of its queue."""
        moved = scripts.REQUEUE_ONE(
            self.client,
            (keys.in_progress(identity), keys.queue(job.queue), keys.QUEUES),
            (job.raw, job.queue),
        )
        return bool(moved)

    def hand_over(self, identity: str, job: Fetched, record: str) -> bool:
        """Move a job off `identity`'s in-progress list onto the unsettled list as `record`."""
        moved = scripts.HANDOVER(
            self.client, (keys.in_progress(identity), keys.UNSETTLED), (job.raw, record)
        )
        return bool(moved)

    def unsettled(self) -> list[bytes]:
        """The settlements stopped processes handed over, oldest first."""
        return [as_bytes(entry) for entry in self.client.lrange(keys.UNSETTLED, 0, -1)]

    def file_unsettled(self, record: bytes, settlement: UnsettledRecord, now: float) -> bool:
        """Write one handed-over settlement; True if this call did."""
        kind, score, entry = settlement.kind, settlement.score, settlement.payload
        written = scripts.FILE_UNSETTLED(
            self.client,
            (
                keys.UNSETTLED,
                keys.RETRY if kind == "retry" else keys.DEAD,
                *_counters(now),
                keys.orphanings(settlement.jid),
            ),
            (record, kind, score, entry, DAY_COUNTER_TTL, *self._dead_trim(now)),
        )
        return bool(written)

    def fail(
        self,
        identity: str | None,
        job: Fetched,
        jid: str,
        target: Target,
        score: float,
        payload: str,
        now: float,
    ) -> bool:
        """Settle a failed attempt into retry, dead or nowhere; False if no longer `identity`'s."""
        written = scripts.FAIL(
            self.client,
            (
                keys.in_progress(identity or ""),
                keys.RETRY if target == "retry" else keys.DEAD,
                *_counters(now),
                keys.orphanings(jid),
            ),
            (
                job.raw,
                "1" if identity else "0",
                DAY_COUNTER_TTL,
                target,
                score,
                payload,
                *self._dead_trim(now),
            ),
        )
        return bool(written)

    def requeue(
        self, identity: str, *, recovery: bool, threshold: float = 0.0, max_orphanings: int = 0
    ) -> tuple[int, int] | None:
        """Put `identity`'s in-progress jobs back on their queues: (requeued, parked).

        With `recovery`, only if its heartbeat is older than `threshold`
        seconds (None if it is alive), counting an orphaning for each job.
        """
        requeued, parked = scripts.REQUEUE(
            self.client,
            (
                keys.in_progress(identity),
                keys.QUEUES,
                keys.REPEAT_ORPHANS,
                keys.PROCESSES,
                keys.process(identity),
                keys.workers(identity),
                keys.memory_history(identity),
            ),
            (
                "1" if recovery else "0",
                threshold,
                max_orphanings,
                identity,
                keys.QUEUE_PREFIX,
                keys.ORPHANINGS_PREFIX,
                ORPHANINGS_TTL,
            ),
        )
        return None if requeued == -1 else (int(requeued), int(parked))

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

    def bury(
        self,
        source: str,
        kind: Literal["zset", "list"],
        entry: bytes,
        payload: str,
        now: float,
        jid: str | None = None,
    ) -> bool:
        """File `entry` of `source` in dead as `payload`; True if this call did.

        With `jid`, the job's orphanings counter goes too (a buried repeat orphan).
        """
        filed = scripts.BURY(
            self.client,
            (source, keys.DEAD, *([keys.orphanings(jid)] if jid else [])),
            (kind, entry, now, payload, *self._dead_trim(now)),
        )
        return bool(filed)

    def _dead_trim(self, now: float) -> tuple[float, int]:
        return now - self.dead_limits.max_age, self.dead_limits.max_jobs

    def in_progress(self, identity: str) -> list[bytes]:
        """The payloads on `identity`'s in-progress list."""
        return [as_bytes(entry) for entry in self.client.lrange(keys.in_progress(identity), 0, -1)]

    def parked_orphans(self) -> list[bytes]:
        """The repeat orphans waiting to be filed in dead."""
        return [as_bytes(entry) for entry in self.client.lrange(keys.REPEAT_ORPHANS, 0, -1)]
