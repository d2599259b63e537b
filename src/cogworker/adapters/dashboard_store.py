"""The dashboard's one way into Redis: every page reads and acts through a `DashboardStore`.

It composes the stores of what the pages show (`sets`: scheduled, retry
and dead; `queues`; `processes`) with the engine's records (the counters,
tracked statuses, attempts, run history) and the periodic schedule, so no
route holds a Redis client.  Enqueueing is not here: the dashboard enqueues
through `cogworker.Client`, as any producer does (client middleware, unique
locks, status tracking).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import redis
from redis.cluster import ClusterNode

from cogworker.adapters import counters, jid_index, parts, pipelines, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_store import BatchStore
from cogworker.adapters.class_metrics import ClassMetricsStore
from cogworker.adapters.dashboard_processes import ProcessStore
from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.adapters.dashboard_results import JobRecords, job_page_records
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.flagged_reads import Flags, refusal, replies
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.layout_store import LayoutStore
from cogworker.adapters.limit_store import LimitStore
from cogworker.adapters.periodic_store import PeriodicStore, decode_entry
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.adapters.redis_client import RedisClient, is_cluster
from cogworker.adapters.replies import as_bytes
from cogworker.domain.cluster_info import combined_info
from cogworker.domain.cron import ScheduleEntry
from cogworker.domain.layout_verdicts import Verdict
from cogworker.domain.records import AttemptRecord, RunRecord
from cogworker.domain.stats import days_back

#: The counters of the stat cards (totals, summed over queues), and the sorted sets they count
#: (each queue's, summed).
TOTALS: tuple[counters.Counter, ...] = (("processed", None), ("failed", None))
SIZED_SETS = ("schedule", "retry", "dead")
#: The INFO sections the Redis grids show.
INFO_SECTIONS = ("server", "clients", "memory")


#: How a problem names a Redis type, where it isn't its own name.
_KIND_NAMES = {"zset": "sorted set"}


def _text(value: bytes | str) -> str:
    return as_bytes(value).decode("utf-8", "backslashreplace")


@attrs.frozen(kw_only=True)
class Counts:
    """The numbers of the overview's stat cards: None where the key can't be read (the
    sums leave such keys out), and a sentence for each key that can't."""

    processed: int | None
    failed: int | None
    busy: int
    enqueued: int
    scheduled: int | None
    retries: int | None
    dead: int | None
    processes: int | None
    problems: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ScheduleRow:
    """One periodic job of the schedule (`entry` None: it couldn't be read), and its run in
    flight (`problem`: its running lock can't be read)."""

    name: str
    entry: ScheduleEntry | None
    running: str | None
    problem: str | None = None


@attrs.frozen(kw_only=True)
class Schedule:
    """A page of the periodic schedule (`problem`: its key can't be read)."""

    rows: tuple[ScheduleRow, ...]
    problem: str | None = None
    #: Periodic jobs in the schedule, those not in `rows` too.
    total: int = 0


@attrs.define
class DashboardStore:
    """The dashboard's view of one Redis."""

    sets: SetStore
    queues: QueueStore
    processes: ProcessStore
    #: Per-class metrics, merged over queues (the read API of a Metrics page).
    class_metrics: ClassMetricsStore
    #: Per-key limits: each key used lately (the Limits page).
    limits: LimitStore
    #: Batches and their status (the Batches page).
    batches: BatchStore
    _client: RedisClient
    _retention: Retention

    @classmethod
    def on(cls, client: RedisClient, retention: Retention) -> DashboardStore:
        """A store on `client`, keeping the dead set and statuses as `retention` says."""
        return cls(
            sets=SetStore(client, retention),
            queues=QueueStore(client),
            processes=ProcessStore(client, ProcessRegistry(client)),
            class_metrics=ClassMetricsStore(client),
            limits=LimitStore(client),
            batches=BatchStore(client),
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
        """The stat cards' numbers, in two round trips (the counters and the sorted sets'
        sizes summed over queues)."""
        flags = Flags()
        pipe = pipelines.pipeline(self._client)
        for registry in (keys.PROCESSES, keys.QUEUES, keys.PARTS):
            pipe.smembers(registry)
        processes, queues, registered = replies(pipe)
        identities = flags.checked(keys.PROCESSES, processes, "set")
        names = flags.checked(keys.QUEUES, queues, "set") or set()
        parted = parts.queues(flags.checked(keys.PARTS, registered, "set") or ())
        set_keys = [(keys.sorted_set(name, part), "zset") for name in SIZED_SETS for part in parted]
        queue_keys = [(keys.queue(_text(name)), "list") for name in names]
        busy_keys = [(keys.workers(_text(identity)), "hash") for identity in identities or ()]
        totals = counters.CounterRead(parted, TOTALS)
        lengths, (processed, failed) = self._lengths(
            [*set_keys, *queue_keys, *busy_keys], totals, flags
        )
        per_set = len(parted)
        scheduled, retries, dead = (
            sum(lengths[start : start + per_set]) for start in range(0, len(set_keys), per_set)
        )
        lengths = lengths[len(set_keys) :]
        return Counts(
            processed=processed,
            failed=failed,
            enqueued=sum(lengths[: len(queue_keys)]),
            busy=sum(lengths[len(queue_keys) :]),
            scheduled=scheduled,
            retries=retries,
            dead=dead,
            processes=None if identities is None else len(identities),
            problems=tuple(flags.problems),
        )

    def _lengths(
        self, sized: list[tuple[str, str]], totals: counters.CounterRead, flags: Flags
    ) -> tuple[list[int], list[int | None]]:
        """The lengths of (key, "list", "hash" or "zset") pairs (0 for an unreadable one,
        flagged) and the `totals`' sums, in one round trip."""
        pipe = pipelines.pipeline(self._client)
        for key, kind in sized:
            {"list": pipe.llen, "hash": pipe.hlen, "zset": pipe.zcard}[kind](key)
        totals.queue(pipe)
        found = replies(pipe)
        lengths = [
            flags.checked(key, length, _KIND_NAMES.get(kind, kind)) or 0
            for (key, kind), length in zip(sized, found[: len(sized)], strict=True)
        ]
        return lengths, totals.sums(found[len(sized) :], flags)

    def layout(self) -> Verdict:
        """What this code makes of the key layout Redis holds (read only: one round trip)."""
        found = LayoutStore(self._client)
        try:
            return found.verdict()
        except redis.exceptions.NoPermissionError:
            # A read-only dashboard's ACL user may not SCAN (it lists every key name on the
            # server); before anything has numbered the layout, the fixed old names decide.
            return found.verdict(scan=False)

    def redis_info(self) -> dict[str, Any]:
        """The server, clients and memory sections of INFO, merged (one round trip).

        On a cluster, those of every primary, combined as `combined_info` says (a round
        trip per section, each asking every primary: a cluster's pipeline refuses INFO)."""
        if is_cluster(self._client):
            return combined_info(self._primaries_info(self._client))
        pipe = pipelines.pipeline(self._client)
        for section in INFO_SECTIONS:
            pipe.info(section)
        return _merged(pipe.execute())

    @staticmethod
    def _primaries_info(client: redis.RedisCluster) -> list[dict[str, Any]]:
        """Each primary's INFO sections, merged, in the cluster's order of its primaries."""
        # redis-py leaves get_primaries unannotated.
        primaries: list[ClusterNode] = client.get_primaries()  # type: ignore[no-untyped-call]
        by_section = [client.info(section, target_nodes=primaries) for section in INFO_SECTIONS]
        if len(primaries) == 1:  # redis-py unwraps the reply of a single node
            by_section = [{primaries[0].name: reply} for reply in by_section]
        return [_merged(reply[node.name] for reply in by_section) for node in primaries]

    def daily_counts(
        self, names: Sequence[str], now: float, days: int
    ) -> dict[str, dict[str, int | None]]:
        """Counters (`processed`, `failed`) for each of the last `days` UTC days, summed over
        queues, by name (None: a queue's counter of the day isn't a count), in one reading."""
        dates = days_back(now, days)
        wanted = [(name, day) for name in names for day in dates]
        values = iter(counters.read(self._client, wanted, Flags()))
        return {name: {day: next(values) for day in dates} for name in names}

    # -- one job's records ---------------------------------------------------

    def status(self, jid: str) -> str | None:
        """A tracked job's status, or None (not tracked, or expired)."""
        return tracking.status(self._client, jid)

    def job_page(self, jid: str) -> JobRecords:
        """`jid`'s status, attempts and kept result, read together (the job page's)."""
        return job_page_records(self._client, jid)

    def indexed_queue(self, jid: str) -> str | None:
        """The queue the jid index names for `jid` (`cogworker:jid:J`), or None."""
        return jid_index.indexed(self._client, jid)

    def set_status(self, queue: str, jid: str, status: str, now: float) -> None:
        """Set a tracked job's status, a job of `queue` (put back on it by hand, say)."""
        runs = RunStore(self._client, status_ttl=self._retention.status_ttl)
        runs.set_status(queue, jid, status, now)

    def attempts(self, jid: str) -> list[AttemptRecord]:
        """A job's failed attempts, newest first (unreadable ones left out)."""
        return tracking.attempts(self._client, jid)

    def history(self, jid: str) -> list[RunRecord]:
        """A job's runs, newest first (unreadable ones left out)."""
        return tracking.history(self._client, jid)

    def class_history(self, class_name: str) -> list[RunRecord]:
        """A job class's last runs on any queue, newest first, as many as one queue keeps
        (unreadable ones left out)."""
        limit = self._retention.history_per_class
        return tracking.class_history(self._client, class_name, limit)

    # -- the periodic schedule -----------------------------------------------

    def schedule(self, first: int = 0, count: int | None = None) -> Schedule:
        """`count` periodic jobs (None: all) by name from the `first` on, each with its run in
        flight: one `HGETALL` (the schedule), then only the running locks of those shown."""
        try:
            stored = PeriodicStore(self._client).schedule()
        except redis.ResponseError as error:
            return Schedule(rows=(), problem=refusal(keys.PERIODIC_SCHEDULE, error, "hash"))
        shown = sorted(stored)[first : None if count is None else first + count]
        entries = {name: decode_entry(stored[name]) for name in shown}
        # An entry that can't be read names no queue, so no running lock: none is read.
        locks = {name: keys.periodic_running(entry.queue, name)
                 for name, entry in entries.items() if entry is not None}  # fmt: skip
        pipe = pipelines.pipeline(self._client)
        for lock in locks.values():
            pipe.get(lock)
        found = dict(zip(locks, replies(pipe), strict=True))
        return Schedule(
            rows=tuple(
                _row(name, entry, locks.get(name, ""), found.get(name))
                for name, entry in entries.items()
            ),
            total=len(stored),
        )


def _merged(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """INFO sections of one node, as one INFO."""
    merged: dict[str, Any] = {}
    for part in parts:
        merged.update(part)
    return merged


def _row(name: str, entry: ScheduleEntry | None, lock: str, running: object) -> ScheduleRow:
    problem = refusal(lock, running, "string") if lock else None
    holder = _text(running) if isinstance(running, bytes | str) else None
    return ScheduleRow(name=name, entry=entry, running=holder, problem=problem)
