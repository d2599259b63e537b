"""The dashboard's one way into Redis: every page reads and acts through a `DashboardStore`.

It composes the stores of what the pages show (`sets`: scheduled, retry
and dead; `queues`; `processes`) with the engine's records (the counters,
tracked statuses, attempts, run history) and the periodic schedule, so no
route holds a Redis client.  Enqueueing is not here: the dashboard enqueues
through `cogworker.Client`, as any producer does (client middleware, unique
locks, status tracking).
"""

from __future__ import annotations

from typing import Any

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import tracking
from cogworker.adapters.dashboard_processes import ProcessStore
from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.periodic_store import PeriodicStore, decode_entry
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.adapters.replies import as_bytes
from cogworker.domain.cron import ScheduleEntry
from cogworker.domain.records import AttemptRecord, RunRecord


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
class ScheduleRow:
    """One periodic job of the schedule (`entry` None: it couldn't be read), and its run in
    flight."""

    name: str
    entry: ScheduleEntry | None
    running: str | None


@attrs.define
class DashboardStore:
    """The dashboard's view of one Redis."""

    sets: SetStore
    queues: QueueStore
    processes: ProcessStore
    _client: redis.Redis
    _retention: Retention

    @classmethod
    def on(cls, client: redis.Redis, retention: Retention) -> DashboardStore:
        """A store on `client`, keeping the dead set and statuses as `retention` says."""
        return cls(
            sets=SetStore(client, retention),
            queues=QueueStore(client),
            processes=ProcessStore(client, ProcessRegistry(client)),
            client=client,
            retention=retention,
        )

    def now(self) -> float:
        """Redis's clock: heartbeats are stamped with it, so ages are measured against it."""
        seconds, micros = self._client.time()
        return seconds + micros / 1_000_000

    def answers(self) -> bool:
        """Whether Redis answers a PING (False: unreachable, timed out, or refused the login)."""
        try:
            self._client.ping()
        except (redis.ConnectionError, redis.TimeoutError):
            return False
        return True

    def counts(self) -> Counts:
        """The stat cards' numbers, in two round trips."""
        pipe = self._client.pipeline(transaction=False)
        pipe.mget([keys.stat("processed"), keys.stat("failed")])
        for key in (keys.SCHEDULE, keys.RETRY, keys.DEAD):
            pipe.zcard(key)
        pipe.smembers(keys.PROCESSES)
        pipe.smembers(keys.QUEUES)
        (processed, failed), scheduled, retries, dead, processes, queues = pipe.execute()
        pipe = self._client.pipeline(transaction=False)
        for name in queues:
            pipe.llen(keys.queue(as_bytes(name).decode("utf-8", "backslashreplace")))
        for identity in processes:
            pipe.hlen(keys.workers(as_bytes(identity).decode("utf-8", "backslashreplace")))
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
        pipe = self._client.pipeline(transaction=False)
        for section in ("server", "clients", "memory"):
            pipe.info(section)
        merged: dict[str, Any] = {}
        for part in pipe.execute():
            merged.update(part)
        return merged

    def daily_counts(self, name: str, now: float, days: int) -> dict[str, int]:
        """A counter (`processed`, `failed`) for each of the last `days` UTC days."""
        return tracking.daily_counts(self._client, name, now, days)

    # -- one job's records ---------------------------------------------------

    def status(self, jid: str) -> str | None:
        """A tracked job's status, or None (not tracked, or expired)."""
        return tracking.status(self._client, jid)

    def set_status(self, jid: str, status: str, now: float) -> None:
        """Set a tracked job's status (put back on its queue by hand, say)."""
        RunStore(self._client, status_ttl=self._retention.status_ttl).set_status(jid, status, now)

    def attempts(self, jid: str) -> list[AttemptRecord]:
        """A job's failed attempts, newest first (unreadable ones left out)."""
        return tracking.attempts(self._client, jid)

    def history(self, jid: str) -> list[RunRecord]:
        """A job's runs, newest first (unreadable ones left out)."""
        return tracking.history(self._client, jid)

    # -- the periodic schedule -----------------------------------------------

    def schedule(self) -> list[ScheduleRow]:
        """Every periodic job of the schedule, by name, with its run in flight."""
        store = PeriodicStore(self._client)
        return [
            ScheduleRow(name=name, entry=decode_entry(raw), running=store.running(name))
            for name, raw in sorted(store.schedule().items())
        ]
