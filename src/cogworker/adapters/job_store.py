"""Moving jobs in Redis: push, fetch, ack, fail, requeue, move due, bury.

Each move is one script (or one pipeline of scripts) that first checks the
job is still where the caller left it, so a repeated or late call can't
duplicate or lose a job.  The store decides nothing: what to write and
where comes from the caller.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, cast

import attrs
import redis
from returns.pipeline import is_successful

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.domain.payload import decode as decode_payload
from cogworker.domain.retries import LONGEST_DELAY
from cogworker.domain.stats import day_of

#: Day counters are kept this long (the dashboard charts up to 90 days).
DAY_COUNTER_TTL = 400 * 86_400
#: A job's orphanings counter outlives any sane retry schedule of a crash-looper.
ORPHANINGS_TTL = 30 * 86_400


def as_bytes(value: bytes | str) -> bytes:
    """A reply as bytes (cogworker's clients don't decode, but the types allow str)."""
    return value if isinstance(value, bytes) else value.encode()


OutcomeKind = Literal["ack", "retry", "dead", "discard"]
OUTCOME_KINDS = ("ack", "retry", "dead", "discard")


@attrs.frozen(kw_only=True)
class Retention:
    """How much is kept, and for how long (seconds), of dead jobs and what is tracked."""

    dead_max_jobs: int = 10_000
    dead_max_age: float = 180 * 86_400
    attempts_kept: int = 25
    attempts_ttl: float = 180 * 86_400
    history_per_job: int = 25
    history_per_class: int = 100
    history_ttl: float = 86_400
    status_ttl: float = 30 * 60


@attrs.frozen(kw_only=True)
class Outcome:
    """What to write when a run is settled: where the job goes and what is recorded."""

    kind: OutcomeKind
    jid: str
    class_name: str = ""
    #: When to retry it, or when it died.
    score: float = 0.0
    #: The entry filed in retry or dead.
    payload: str = ""
    #: JSON records for the attempts log and the run history ("" for none).
    attempt: str = ""
    history: str = ""
    #: Whether the run goes into the job's own history too (else only its class's).
    history_per_job: bool = True
    #: The job's new status, when its status is tracked.
    status: str = ""
    #: Its unique lock and what to do with it: "release", "extend" (by `lock_ttl`) or "".
    unique_lock: str = ""
    unique_action: str = ""
    lock_ttl: float = 0.0
    #: Its periodic running lock, released when the job ends for good ("" for none).
    running_lock: str = ""

    @property
    def is_plain_ack(self) -> bool:
        """A success with only counters and its class's history to write (see ack_many.lua)."""
        return self.kind == "ack" and not (
            self.history_per_job or self.status or self.unique_lock or self.running_lock
        )


def outcome_record(outcome: Outcome) -> str:
    """`outcome` as the JSON record a stopping process hands over."""
    return json.dumps(attrs.asdict(outcome))


def parse_outcome_record(record: bytes) -> Outcome | None:
    """A handed-over record, or None if it isn't one (damaged by hand, say)."""
    try:
        fields = json.loads(record)
        outcome = Outcome(**{name: fields[name] for name in attrs.fields_dict(Outcome)})
    except (ValueError, KeyError, TypeError):
        return None
    return outcome if outcome.kind in OUTCOME_KINDS else None


@attrs.frozen(kw_only=True)
class Fetched:
    """A job as taken from a queue: its payload exactly as stored (the key for ack)."""

    queue: str
    raw: bytes


@attrs.frozen(kw_only=True)
class Settlement:
    """An outcome to write for a job as it was fetched."""

    fetched: Fetched
    outcome: Outcome


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


@attrs.frozen(kw_only=True)
class Judgment:
    """The limits a requeue judges by (see requeue.lua): when a process is gone, and how
    many orphanings and unfinished hand-backs a job may have before it is parked."""

    threshold: float = 0.0
    beat_gap: float = 0.0
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
        decoded = decode_payload(raw)
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


def _fetched(queues: Sequence[str], reply: list[Any]) -> list[Fetched]:
    """A fetch script's flat reply (queue position, payload, ...) as Fetched jobs."""
    return [
        Fetched(queue=queues[int(reply[i]) - 1], raw=as_bytes(reply[i + 1]))
        for i in range(0, len(reply), 2)
    ]


@attrs.define
class JobStore:
    """Job moves on one Redis."""

    client: redis.Redis
    retention: Retention = attrs.field(factory=Retention)

    def push(self, queue: str, payloads: Sequence[str]) -> None:
        """Put payloads on `queue` (one round trip)."""
        scripts.PUSH(self.client, (keys.queue(queue), keys.QUEUES), (queue, *payloads))

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
        for queue, payloads in groups.items():
            scripts.PUSH.queue(pipe, (keys.queue(queue), keys.QUEUES), (queue, *payloads))
        if scheduled:
            pipe.zadd(keys.SCHEDULE, {payload: at for at, payload in scheduled})
        self._mark(pipe, queued, "queued", now)
        if pipe.command_stack:
            scripts.run_pipeline(self.client, pipe)

    def fetch(self, identity: str, queues: Sequence[str], count: int) -> list[Fetched]:
        """Take up to `count` jobs into `identity`'s in-progress list, queues in the order given."""
        reply = scripts.FETCH(
            self.client, (keys.in_progress(identity), *map(keys.queue, queues)), (count,)
        )
        return _fetched(queues, reply)

    def pop(self, queues: Sequence[str], count: int) -> list[Fetched]:
        """Basic fetch: pop up to `count` jobs outright, queues in the order given."""
        return _fetched(queues, scripts.POP(self.client, [keys.queue(q) for q in queues], (count,)))

    def fetch_blocking(self, identity: str, queue: str, timeout: float) -> Fetched | None:
        """Wait up to `timeout` seconds for a job on `queue`, taken into the in-progress list."""
        # The same ends as the fetch script: the oldest job (queues are LPUSHed), onto
        # the list's left.  redis-py's defaults (LEFT to RIGHT) would take the newest.
        raw = self.client.blmove(
            keys.queue(queue),
            keys.in_progress(identity),
            max(1, round(timeout)),
            src="RIGHT",
            dest="LEFT",
        )
        return None if raw is None else Fetched(queue=queue, raw=as_bytes(raw))

    def pop_basic(self, queues: Sequence[str], timeout: float) -> Fetched | None:
        """Basic fetch: pop a job outright (lost if this process dies before it ends)."""
        reply = self.client.brpop([keys.queue(name) for name in queues], timeout)
        if reply is None:
            return None
        key, raw = reply
        return Fetched(queue=as_bytes(key).decode()[len(keys.QUEUE_PREFIX) :], raw=as_bytes(raw))

    def settle(self, identity: str | None, job: Fetched, outcome: Outcome, now: float) -> bool:
        """Write a run's outcome; False if the job was no longer `identity`'s (nothing written).

        `identity` None is basic fetch: no in-progress list to check.
        """
        holder = keys.in_progress(identity or "")
        return self._settle(holder, job.raw, identity is not None, outcome, now)

    def settle_many(
        self,
        identity: str | None,
        settlements: Sequence[Settlement],
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
            self._mark_one(pipe, jid, "working", started_at)
        holder = keys.in_progress(identity or "")
        plain: list[int] = []
        others: list[int] = []
        for i, done in enumerate(settlements):
            (plain if done.outcome.is_plain_ack else others).append(i)
        if plain:
            acks = [settlements[i] for i in plain]
            self._queue_acks(pipe, holder, identity is not None, acks, now)
        for i in others:
            settle_keys, settle_args = self._settle_call(
                holder,
                settlements[i].fetched.raw,
                identity is not None,
                settlements[i].outcome,
                now,
            )
            scripts.SETTLE.queue(pipe, settle_keys, settle_args)
        # The marks' replies (an HSET's and an EXPIRE's each) come first.
        replies = iter(scripts.run_pipeline(self.client, pipe)[2 * len(marks) :])
        written = [False] * len(settlements)
        for i, flag in zip(plain, next(replies) if plain else (), strict=True):
            written[i] = bool(flag)
        for i, reply in zip(others, replies, strict=True):
            written[i] = bool(reply)
        return written

    def _queue_acks(
        self,
        pipe: redis.client.Pipeline,
        holder: str,
        owned: bool,
        acks: Sequence[Settlement],
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

    def settle_handed_over(self, record: bytes, outcome: Outcome, now: float) -> bool:
        """Write an outcome a stopped process handed over; True if this call did."""
        return self._settle(keys.UNSETTLED, record, True, outcome, now)

    def _settle(self, holder: str, entry: bytes, owned: bool, outcome: Outcome, now: float) -> bool:
        settle_keys, settle_args = self._settle_call(holder, entry, owned, outcome, now)
        return bool(scripts.SETTLE(self.client, settle_keys, settle_args))

    def _settle_call(
        self, holder: str, entry: bytes, owned: bool, outcome: Outcome, now: float
    ) -> tuple[tuple[str, ...], tuple[bytes | str | int | float, ...]]:
        day, kept = day_of(now), self.retention
        settle_keys = (
            holder,
            keys.RETRY if outcome.kind == "retry" else keys.DEAD,
            keys.stat("processed"),
            keys.stat("processed", day),
            keys.stat("failed"),
            keys.stat("failed", day),
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
            DAY_COUNTER_TTL, *self._dead_trim(now),
            outcome.attempt, kept.attempts_kept, int(kept.attempts_ttl),
            outcome.history, kept.history_per_job, kept.history_per_class, int(kept.history_ttl),
            outcome.status, int(kept.status_ttl), now,
            outcome.jid, outcome.unique_action, int(outcome.lock_ttl * 1000),
            "release" if outcome.running_lock and outcome.kind != "retry" else "",
            "1" if outcome.history_per_job else "0",
        )  # fmt: skip
        return settle_keys, settle_args

    def push_unique(self, pushes: Sequence[UniquePush]) -> list[int]:
        """Push unique jobs whose locks are free (one round trip): 1 where pushed, 0 where
        another jid holds the lock, 2 where this jid does (pushed before: nothing done)."""
        pipe = self.client.pipeline(transaction=False)
        for push in pushes:
            target = keys.SCHEDULE if push.at is not None else keys.queue(push.queue)
            scripts.PUSH_UNIQUE.queue(
                pipe,
                (target, keys.QUEUES, push.lock),
                (push.queue, push.payload, push.jid, int(push.ttl * 1000), push.at or ""),
            )
        return [int(reply) for reply in scripts.run_pipeline(self.client, pipe)]

    def take_lock(self, lock: str, jid: str, ttl: float) -> bool:
        """Take a lock for `jid` if it is free or already `jid`'s (its TTL starts again).

        A TTL longer than the longest delay (say a payload's 1e300) is held that long.
        """
        seconds = ttl if 0 < ttl < LONGEST_DELAY else LONGEST_DELAY
        return bool(scripts.TAKE_LOCK(self.client, (lock,), (jid, max(1, int(seconds * 1000)))))

    def release_lock(self, lock: str, jid: str) -> bool:
        """Let go of a lock `jid` holds; False if it was gone or someone else's."""
        return bool(scripts.RELEASE_LOCK(self.client, (lock,), (jid,)))

    def defer(self, identity: str, job: Fetched, at: float) -> bool:
        """Move a job off `identity`'s in-progress list to the scheduled set, to run at `at`."""
        return bool(
            scripts.DEFER(self.client, (keys.in_progress(identity), keys.SCHEDULE), (job.raw, at))
        )

    def set_status(self, jid: str, status: str, now: float) -> None:
        """Set a tracked job's status outside a settlement (it started working, say)."""
        pipe = self.client.pipeline(transaction=False)
        self._mark(pipe, [jid], status, now)
        pipe.execute()

    def _mark(
        self, pipe: redis.client.Pipeline, jids: Sequence[str], status: str, now: float
    ) -> None:
        for jid in jids:
            self._mark_one(pipe, jid, status, now)

    def _mark_one(self, pipe: redis.client.Pipeline, jid: str, status: str, at: float) -> None:
        pipe.hset(keys.status(jid), mapping={"status": status, "update_time": at})
        pipe.expire(keys.status(jid), int(self.retention.status_ttl))

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

    def requeue_own(
        self, identity: str, *, running: Collection[bytes] = (), max_handbacks: int
    ) -> int:
        """At shutdown: put `identity`'s own unfinished jobs back on their queues; how many.

        The `running` payloads are handed back unfinished: each counts a
        hand-back, and one handed back more than `max_handbacks` times is
        parked for the reconciler to file in dead instead.
        """
        requeued, _ = self._requeue(
            identity, Judgment(max_handbacks=max_handbacks), running=running
        )
        return max(requeued, 0)

    def recover(
        self, identity: str, *, threshold: float, max_orphanings: int, beat_gap: float
    ) -> tuple[int, int] | None:
        """A gone process's jobs back on their queues: (requeued, parked), counting an
        orphaning for each; None when it may not be judged gone.

        Gone: its heartbeat is older than `threshold` seconds while the other
        processes keep beating (no gap over `beat_gap` between anyone's beats
        within the last threshold; see requeue.lua).
        """
        judgment = Judgment(threshold=threshold, beat_gap=beat_gap, max_orphanings=max_orphanings)
        requeued, parked = self._requeue(identity, judgment, recovery=True)
        return None if requeued == -1 else (requeued, parked)

    def _requeue(
        self,
        identity: str,
        judgment: Judgment,
        *,
        recovery: bool = False,
        running: Collection[bytes] = (),
    ) -> tuple[int, int]:
        # The judging arguments count only with `recovery` (see requeue.lua).
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
                keys.BEATS,
                keys.REPEAT_HANDBACKS,
            ),
            (
                "1" if recovery else "0",
                judgment.threshold,
                judgment.max_orphanings,
                identity,
                keys.QUEUE_PREFIX,
                keys.ORPHANINGS_PREFIX,
                ORPHANINGS_TTL,
                judgment.beat_gap,
                judgment.max_handbacks,
                keys.HANDBACKS_PREFIX,
                *_told_entries(self.in_progress(identity), running),
            ),
        )
        return int(requeued), int(parked)

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

        With `jid`, the job's orphanings and hand-backs counters go too (a
        buried repeat orphan or hand-back).
        """
        counters = [keys.orphanings(jid), keys.handbacks(jid)] if jid else []
        filed = scripts.BURY(
            self.client,
            (source, keys.DEAD, *counters),
            (kind, entry, now, payload, *self._dead_trim(now)),
        )
        return bool(filed)

    def _dead_trim(self, now: float) -> tuple[float, int]:
        return now - self.retention.dead_max_age, self.retention.dead_max_jobs

    def in_progress(self, identity: str) -> list[bytes]:
        """The payloads on `identity`'s in-progress list."""
        return [as_bytes(entry) for entry in self.client.lrange(keys.in_progress(identity), 0, -1)]

    def parked(self, parked: str) -> list[bytes]:
        """The entries of a parking list (repeat orphans or hand-backs) waiting to be
        filed in dead."""
        return [as_bytes(entry) for entry in self.client.lrange(parked, 0, -1)]
