"""The dashboard's reads and actions on Redis.

Reads are a fixed number of round trips per page, whatever the sizes of
the sets: pages of a sorted set are walked from a cursor with `LIMIT`, and
every walk is given a budget of entries it may look at.  Actions are
at-most-once scripts (the engine's `move_due` to put an entry back on its
queue; `dashboard_remove` to delete or kill entries, letting go of their
jobs' locks in the same step), so an entry someone else already moved is
simply not acted on twice: the caller gets False and says so.  The store
decides nothing: what to move where, and which locks a job holds, comes
from the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript

FIND_IN_LIST = LuaScript("dashboard_find")
REMOVE = LuaScript("dashboard_remove")

#: Entries fetched per round trip while walking a sorted set.
WALK_BATCH = 250
#: Entries of a queue the job page looks through for a jid.
QUEUE_SEARCH_DEPTH = 10_000
#: Elements `ZSCAN` is asked to look at per call while looking for a jid.
ZSCAN_COUNT = 5_000


@attrs.frozen(kw_only=True)
class Entry:
    """A sorted-set member as stored, with its score."""

    member: bytes
    score: float


@attrs.frozen(kw_only=True)
class Removal:
    """An entry to take away, and the locks its job may hold (released only if they name `jid`)."""

    entry: bytes
    jid: str = ""
    unique_lock: str = ""
    running_lock: str = ""


@attrs.frozen(kw_only=True)
class Counts:
    """The numbers of the overview's stat cards."""

    processed: int
    failed: int
    busy: int
    enqueued: int
    scheduled: int
    retries: int
    dead: int
    processes: int


@attrs.frozen(kw_only=True)
class ProcessInfo:
    """A registered process: its heartbeat hash (decoded) and how many threads are busy."""

    identity: str
    fields: dict[str, str]
    busy: int


def _text(value: bytes | str) -> str:
    return as_bytes(value).decode("utf-8", "backslashreplace")


@attrs.define
class DashboardStore:
    """The dashboard's view of one Redis."""

    client: redis.Redis
    retention: Retention
    registry: ProcessRegistry

    @classmethod
    def on(cls, client: redis.Redis, retention: Retention) -> DashboardStore:
        """A store on `client`, keeping the dead set and statuses as `retention` says."""
        return cls(client=client, retention=retention, registry=ProcessRegistry(client))

    # -- reads -------------------------------------------------------------

    def now(self) -> float:
        """Redis's clock: heartbeats are stamped with it, so ages are measured against it."""
        seconds, micros = self.client.time()
        return seconds + micros / 1_000_000

    def counts(self) -> Counts:
        """The stat cards' numbers, in two round trips."""
        pipe = self.client.pipeline(transaction=False)
        pipe.mget([keys.stat("processed"), keys.stat("failed")])
        for key in (keys.SCHEDULE, keys.RETRY, keys.DEAD):
            pipe.zcard(key)
        pipe.smembers(keys.PROCESSES)
        pipe.smembers(keys.QUEUES)
        (processed, failed), scheduled, retries, dead, processes, queues = pipe.execute()
        pipe = self.client.pipeline(transaction=False)
        for name in queues:
            pipe.llen(keys.queue(_text(name)))
        for identity in processes:
            pipe.hlen(keys.workers(_text(identity)))
        sizes = pipe.execute()
        return Counts(
            processed=int(processed or 0),
            failed=int(failed or 0),
            busy=sum(sizes[len(queues) :]),
            enqueued=sum(sizes[: len(queues)]),
            scheduled=scheduled,
            retries=retries,
            dead=dead,
            processes=len(processes),
        )

    def redis_info(self) -> dict[str, Any]:
        """The server, clients and memory sections of INFO, merged (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for section in ("server", "clients", "memory"):
            pipe.info(section)
        merged: dict[str, Any] = {}
        for part in pipe.execute():
            merged.update(part)
        return merged

    def processes(self) -> list[ProcessInfo]:
        """Every registered process with its heartbeat fields, by identity."""
        identities = self.registry.identities()
        pipe = self.client.pipeline(transaction=False)
        for identity in identities:
            pipe.hgetall(keys.process(identity))
            pipe.hlen(keys.workers(identity))
        replies = pipe.execute()
        return [
            ProcessInfo(
                identity=identity,
                fields={_text(k): _text(v) for k, v in fields.items()},
                busy=int(busy),
            )
            for identity, fields, busy in zip(identities, replies[::2], replies[1::2], strict=True)
        ]

    def size(self, sorted_set: str) -> int:
        """How many entries a sorted set holds."""
        return int(self.client.zcard(sorted_set))

    def walk(
        self,
        sorted_set: str,
        start: float | None,
        *,
        descending: bool,
        budget: int,
        batch: int = WALK_BATCH,
    ) -> Iterator[Entry]:
        """Entries from score `start` on (inclusive; None: from the end), at most `budget`.

        Each round trip is one `ZRANGE ... BYSCORE LIMIT`, so the cost is
        the budget, not the size of the set.
        """
        first = repr(start) if start is not None else ("+inf" if descending else "-inf")
        last = "-inf" if descending else "+inf"
        offset = 0
        while offset < budget:
            count = min(batch, budget - offset)
            found = cast(
                "list[tuple[bytes, float]]",
                self.client.zrange(
                    sorted_set, first, last, desc=descending, byscore=True,
                    offset=offset, num=count, withscores=True,
                ),
            )  # fmt: skip
            for member, score in found:
                yield Entry(member=as_bytes(member), score=float(score))
            if len(found) < count:
                return
            offset += count

    def members_at(self, sorted_set: str, scores: Sequence[float]) -> list[list[bytes]]:
        """For each score, the members of a sorted set with exactly that score (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for score in scores:
            pipe.zrangebyscore(sorted_set, repr(score), repr(score))
        return [[as_bytes(member) for member in found] for found in pipe.execute()]

    def scan_for(self, sorted_set: str, text: str, budget: int) -> list[Entry]:
        """Members containing `text` (glob-escaped here), looking at about `budget` elements."""
        pattern = "*" + "".join("\\" + c if c in "*?[]\\" else c for c in text) + "*"
        found: list[Entry] = []
        cursor, looked = 0, 0
        while looked < budget:
            cursor, batch = self.client.zscan(sorted_set, cursor, match=pattern, count=ZSCAN_COUNT)
            found.extend(Entry(member=as_bytes(m), score=float(s)) for m, s in batch)  # type: ignore[arg-type]  # redis-py types ZSCAN's pairs loosely
            looked += ZSCAN_COUNT
            if cursor == 0:
                break
        return found

    def queue_page(self, queue: str, offset: int, count: int) -> tuple[int, list[bytes]]:
        """A queue's size and `count` jobs from `offset`, the next one to run first."""
        key = keys.queue(queue)
        pipe = self.client.pipeline(transaction=False)
        pipe.llen(key)
        # Pushed on the left and taken from the right: the right end runs next.
        pipe.lrange(key, -(offset + count), -(offset + 1))
        size, entries = pipe.execute()
        return int(size), [as_bytes(entry) for entry in reversed(entries)]

    def queue_size(self, queue: str) -> int:
        """How many jobs a queue holds."""
        return int(self.client.llen(keys.queue(queue)))

    def find_in_queue(self, queue: str, text: str) -> list[bytes]:
        """Entries among the next `QUEUE_SEARCH_DEPTH` jobs of a queue that contain `text`."""
        found = FIND_IN_LIST(self.client, (keys.queue(queue),), (text, -QUEUE_SEARCH_DEPTH, -1))
        return [as_bytes(entry) for entry in found]

    def queue_names(self) -> list[str]:
        """Every registered queue, by name."""
        return sorted(_text(name) for name in self.client.smembers(keys.QUEUES))

    # -- actions -----------------------------------------------------------

    def requeue(self, sorted_set: str, moves: Sequence[tuple[bytes, str, str]]) -> list[bool]:
        """Put (entry, queue, payload) triples on their queues; True where this call did."""
        return EnqueueStore(self.client).move_due(sorted_set, moves) if moves else []

    def set_status(self, jid: str, status: str, now: float) -> None:
        """Set a tracked job's status (put back on its queue by hand, say)."""
        RunStore(self.client, status_ttl=self.retention.status_ttl).set_status(jid, status, now)

    def queue_tail(self, queue: str, count: int) -> list[bytes]:
        """The `count` jobs of a queue that run next, the next one first."""
        return [
            as_bytes(entry) for entry in reversed(self.client.lrange(keys.queue(queue), -count, -1))
        ]

    def kill(self, sorted_set: str, removals: Sequence[Removal], now: float) -> list[bool]:
        """File entries in dead byte for byte as they are; False where one was already gone."""
        trim = self.retention.dead_trim(now)
        return self._remove((sorted_set, keys.DEAD), ("zset", "kill", now, *trim), removals)

    def delete(self, sorted_set: str, removals: Sequence[Removal]) -> int:
        """Remove entries from a sorted set (no hooks run); how many were still there."""
        return sum(self._remove((sorted_set, keys.NO_LOCK), ("zset", "delete", "", 0, 0), removals))

    def delete_from_queue(
        self, queue: str, removals: Sequence[Removal], *, clearing: bool
    ) -> list[bool]:
        """Remove jobs from a queue; False where one was no longer there.  `clearing`: the
        queue is unregistered once it is empty."""
        args = ("list", "delete", queue if clearing else "", 0, 0)
        return self._remove((keys.queue(queue), keys.QUEUES), args, removals)

    def _remove(
        self, where: tuple[str, str], head: Sequence[str | float | int], removals: Sequence[Removal]
    ) -> list[bool]:
        """Run `dashboard_remove` on `removals` (see its header)."""
        locks: list[str] = []
        entries: list[bytes | str] = []
        for removal in removals:
            locks += [removal.unique_lock or keys.NO_LOCK, removal.running_lock or keys.NO_LOCK]
            entries += [removal.entry, removal.jid]
        if not removals and head[0] == "zset":
            return []
        replies = REMOVE(self.client, (*where, *locks), (*head, *entries))
        return [bool(reply) for reply in replies]

    def signal(self, identity: str, signal: str) -> bool:
        """Ask a registered process to quiet, resume or stop; False if it isn't registered."""
        if not self.client.sismember(keys.PROCESSES, identity):
            return False
        self.registry.send(identity, signal)
        return True
