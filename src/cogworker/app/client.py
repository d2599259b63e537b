"""`Client`: puts jobs on their queues (now, later, or many at once)."""

from __future__ import annotations

import datetime as dt
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import attrs
import redis

from cogworker.adapters import tracking
from cogworker.adapters.connection import connect, describe
from cogworker.adapters.job_store import JobStore, UniquePush
from cogworker.app import testing
from cogworker.app.config import Config
from cogworker.app.job import Job
from cogworker.app.middleware import client_chain
from cogworker.domain import payload, unique
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON, first_non_json, is_json_native
from cogworker.exceptions import ConfigError, RedisUnavailableError

#: Jobs per round trip in `enqueue_many`.
BATCH_SIZE = 1_000


def new_jid() -> str:
    """A fresh job id: 24 hex digits from the OS's random source."""
    return secrets.token_hex(12)


def check_args(args: Sequence[object]) -> None:
    """Raise TypeError naming the first argument JSON can't carry as is."""
    if is_json_native(list(args)):
        return
    found = first_non_json(list(args), "args")
    if found is not None:
        where, kind = found
        raise TypeError(
            f"job arguments must be JSON-native (str, int, float, bool, None, list, "
            f"dict with str keys); {where} is {kind}"
        )


def _extra(job_class: type[Job], args: Sequence[JSON], lock_ttl: float) -> dict[str, JSON]:
    """The payload keys a job's options add: status tracking, its unique lock."""
    options = job_class.cogworker_options
    extra: dict[str, JSON] = {"track_status": True} if options.track_status else {}
    if options.unique is not None:
        custom = getattr(job_class, "unique_key", None)
        key = unique.lock_key(
            job_class.class_path(),
            options.queue,
            list(args),
            custom(list(args)) if custom else None,
        )
        extra.update(
            unique=options.unique, unique_lock=key, unique_ttl=options.unique_for or lock_ttl
        )
    return extra


def build_job(
    job_class: type[Job], args: Sequence[JSON], now: float, *, lock_ttl: float = 3600.0
) -> JobRecord:
    """The record of a new run of `job_class` with `args`."""
    if not (isinstance(job_class, type) and issubclass(job_class, Job)):
        raise TypeError(f"{job_class!r} is not a cogworker Job class")
    if job_class.__module__ == "__main__":
        raise ConfigError(
            f"{job_class.__qualname__} is defined in __main__, which a worker can't import; "
            "define job classes in a module"
        )
    check_args(args)
    options = job_class.cogworker_options
    return JobRecord(
        class_name=job_class.class_path(),
        queue=options.queue,
        jid=new_jid(),
        args=tuple(args),
        retry=options.retry,
        created_at=now,
        extra=_extra(job_class, args, lock_ttl),
    )


class Client:
    """Enqueues jobs on the Redis of a `Config`.  Thread-safe; share one per process."""

    def __init__(
        self,
        config: Config,
        *,
        client: redis.Redis | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.redis = client or connect(config.resolved_redis_url(), connections="per-thread")
        self.store = JobStore(self.redis)
        self._clock = clock

    def enqueue(self, job_class: type[Job], *args: JSON) -> str | None:
        """Put a run of `job_class` on its queue; the jid, or None if a middleware stopped it."""
        return self.push(self._build(job_class, args))

    def enqueue_in(self, seconds: float, job_class: type[Job], *args: JSON) -> str | None:
        """Enqueue a run `seconds` from now."""
        return self.enqueue_at(self._clock() + seconds, job_class, *args)

    def enqueue_at(self, at: float | dt.datetime, job_class: type[Job], *args: JSON) -> str | None:
        """Enqueue a run at `at`, a unix timestamp or an aware datetime (now if past)."""
        return self.push(self._build(job_class, args), at=_timestamp(at))

    def enqueue_many(
        self, job_class: type[Job], args_list: Iterable[Sequence[JSON]]
    ) -> list[str | None]:
        """Enqueue one run per argument list, 1,000 per round trip; the jids in order.

        Every argument list is checked before anything is pushed.
        """
        jobs = [self._build(job_class, args) for args in args_list]
        jids: list[str | None] = []
        for start in range(0, len(jobs), BATCH_SIZE):
            jids.extend(self._push_batch(jobs[start : start + BATCH_SIZE]))
        return jids

    def _build(self, job_class: type[Job], args: Sequence[JSON]) -> JobRecord:
        return build_job(job_class, args, self._clock(), lock_ttl=self.config.unique_lock_ttl)

    def push(self, job: JobRecord, *, at: float | None = None) -> str | None:
        """Push a built record through the client middleware; the jid, or None if stopped."""
        mode = testing.current_mode()
        if mode is not None:
            return mode.push(job)
        middleware = self.config.client_middleware
        return client_chain(middleware, lambda passed: self._push_one(passed, at))(job)

    def close(self) -> None:
        """Close this client's connections."""
        self.redis.close()

    def status(self, jid: str) -> str | None:
        """A tracked job's status (queued, working, retrying, complete, failed, dead,
        discarded), or None if it isn't tracked or has expired."""
        try:
            return tracking.status(self.redis, jid)
        except (redis.ConnectionError, redis.TimeoutError) as error:
            raise self._unavailable("can't read a status", error) from error

    def _push_one(self, job: JobRecord, at: float | None) -> str | None:
        (pushed,) = self._write([(job, at)])
        return job.jid if pushed else None

    def _push_batch(self, jobs: list[JobRecord]) -> list[str | None]:
        mode = testing.current_mode()
        if mode is not None:
            return [mode.push(job) for job in jobs]
        passed: list[JobRecord] = []

        def collect(job: JobRecord) -> str | None:
            passed.append(job)  # as the middleware left it
            return job.jid

        chain = client_chain(self.config.client_middleware, collect)
        results = [chain(job) for job in jobs]
        written = self._write([(job, None) for job in passed])
        pushed = {job.jid for job, ok in zip(passed, written, strict=True) if ok}
        return [jid if jid in pushed else None for jid in results]

    def _write(self, jobs: Sequence[tuple[JobRecord, float | None]]) -> list[bool]:
        """Push jobs (now, or at a time); False where a unique job's lock was already held."""
        now = self._clock()
        batch = _Batch()
        for job, at in jobs:
            batch.add(job, at if at is not None and at > now else None, now, self.config)
        tracked = [job.jid for job, _ in jobs if self._tracked(job)]
        try:
            if batch.is_one_plain_push() and not tracked:
                self.store.push(*batch.only_push())
                return [True] * len(jobs)
            pushed = dict(zip(batch.unique_jids, self.store.push_unique(batch.unique), strict=True))
            queued = [jid for jid in tracked if pushed.get(jid, True)]
            self.store.push_all(batch.groups, batch.scheduled, queued=queued, now=now)
        except (redis.ConnectionError, redis.TimeoutError) as error:
            raise self._unavailable("can't enqueue", error) from error
        return [pushed.get(job.jid, True) for job, _ in jobs]

    def _tracked(self, job: JobRecord) -> bool:
        return self.config.track_status or job.extra.get("track_status") is True

    def _unavailable(self, doing: str, error: redis.RedisError) -> RedisUnavailableError:
        url = describe(self.config.resolved_redis_url())
        return RedisUnavailableError(f"{doing}: Redis at {url} is unavailable ({error})")


@attrs.define
class _Batch:
    """Jobs sorted by how they are pushed: onto queues, scheduled, or unique (lock first)."""

    groups: dict[str, list[str]] = attrs.field(factory=dict)
    scheduled: list[tuple[float, str]] = attrs.field(factory=list)
    unique: list[UniquePush] = attrs.field(factory=list)

    @property
    def unique_jids(self) -> list[str]:
        """The jids of the unique pushes, in order."""
        return [push.jid for push in self.unique]

    def add(self, job: JobRecord, run_at: float | None, now: float, config: Config) -> None:
        """Sort in one job (`run_at` None: now)."""
        text = payload.encode(job, enqueued_at=None if run_at is not None else now)
        lock = job.extra.get("unique_lock")
        if isinstance(lock, str) and unique.locks_at_enqueue(str(job.extra.get("unique"))):
            ttl = unique.ttl_of(job.extra, config.unique_lock_ttl)
            self.unique.append(
                UniquePush(
                    queue=job.queue,
                    payload=text,
                    jid=job.jid,
                    lock=lock,
                    ttl=unique.enqueue_ttl(ttl, run_at, now),
                    at=run_at,
                )
            )
        elif run_at is not None:
            self.scheduled.append((run_at, text))
        else:
            self.groups.setdefault(job.queue, []).append(text)

    def is_one_plain_push(self) -> bool:
        """Whether this is one queue's pushes alone (the fast path: one script call)."""
        return not self.unique and not self.scheduled and len(self.groups) == 1

    def only_push(self) -> tuple[str, list[str]]:
        """The queue and payloads of a plain push."""
        ((queue, payloads),) = self.groups.items()
        return queue, payloads


def _timestamp(at: float | dt.datetime) -> float:
    if isinstance(at, dt.datetime):
        if at.tzinfo is None:
            raise ValueError(
                "perform_at needs an aware datetime (with tzinfo), or a unix timestamp"
            )
        return at.timestamp()
    return float(at)


_default: Client | None = None
_default_lock = threading.Lock()


def configure(config: Config) -> Client:
    """Make `config` the one `Job.perform_async` and friends use; returns its client."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
        _default = Client(config)
        return _default


def status(jid: str) -> str | None:
    """A tracked job's status through the configured client (see `Client.status`)."""
    return default_client().status(jid)


def default_client() -> Client:
    """The client `configure` set up (or one for a default `Config` on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Client(Config())
        return _default
