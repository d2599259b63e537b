"""`Client`: puts jobs on their queues (now, later, or many at once)."""

from __future__ import annotations

import datetime as dt
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import attrs
import redis

from cogworker.adapters import tracking
from cogworker.adapters.connection import connect, describe
from cogworker.adapters.job_store import JobStore
from cogworker.app import testing
from cogworker.app.config import Config
from cogworker.app.job import Job
from cogworker.app.middleware import client_chain
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON, first_non_json
from cogworker.exceptions import ConfigError, RedisUnavailableError

#: Jobs per round trip in `enqueue_many`.
BATCH_SIZE = 1_000


def new_jid() -> str:
    """A fresh job id: 24 hex digits from the OS's random source."""
    return secrets.token_hex(12)


def check_args(args: Sequence[object]) -> None:
    """Raise TypeError naming the first argument JSON can't carry as is."""
    found = first_non_json(list(args), "args")
    if found is not None:
        where, kind = found
        raise TypeError(
            f"job arguments must be JSON-native (str, int, float, bool, None, list, "
            f"dict with str keys); {where} is {kind}"
        )


def build_job(job_class: type[Job], args: Sequence[JSON], now: float) -> JobRecord:
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
        extra={"track_status": True} if options.track_status else {},
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
        self.redis = client or connect(config.resolved_redis_url())
        self.store = JobStore(self.redis)
        self._clock = clock

    def enqueue(self, job_class: type[Job], *args: JSON) -> str | None:
        """Put a run of `job_class` on its queue; the jid, or None if a middleware stopped it."""
        return self.push(build_job(job_class, args, self._clock()))

    def enqueue_in(self, seconds: float, job_class: type[Job], *args: JSON) -> str | None:
        """Enqueue a run `seconds` from now."""
        return self.enqueue_at(self._clock() + seconds, job_class, *args)

    def enqueue_at(self, at: float | dt.datetime, job_class: type[Job], *args: JSON) -> str | None:
        """Enqueue a run at `at`, a unix timestamp or an aware datetime (now if past)."""
        return self.push(build_job(job_class, args, self._clock()), at=_timestamp(at))

    def enqueue_many(
        self, job_class: type[Job], args_list: Iterable[Sequence[JSON]]
    ) -> list[str | None]:
        """Enqueue one run per argument list, 1,000 per round trip; the jids in order.

        Every argument list is checked before anything is pushed.
        """
        now = self._clock()
        jobs = [build_job(job_class, args, now) for args in args_list]
        jids: list[str | None] = []
        for start in range(0, len(jobs), BATCH_SIZE):
            jids.extend(self._push_batch(jobs[start : start + BATCH_SIZE]))
        return jids

    def push(self, job: JobRecord, *, at: float | None = None) -> str | None:
        """Push a built record through the client middleware; the jid, or None if stopped."""
        mode = testing.current_mode()
        if mode is not None:
            return mode.push(job)
        return client_chain(self.config.client_middleware, self._pusher(at))(job)

    def close(self) -> None:
        """Close this client's connections."""
        self.redis.close()

    def status(self, jid: str) -> str | None:
        """A tracked job's status (queued, working, retrying, complete, failed, dead,
        discarded), or None if it isn't tracked or has expired."""
        with self._redis_errors():
            return tracking.status(self.redis, jid)

    def _pusher(self, at: float | None) -> Callable[[JobRecord], str | None]:
        def push(job: JobRecord) -> str | None:
            now = self._clock()
            queued = [job.jid] if self._tracked(job) else []
            with self._redis_errors():
                if at is not None and at > now:
                    self.store.schedule([(at, payload.encode(job))], queued=queued, now=now)
                elif queued:
                    self.store.push_groups(
                        [(job.queue, [_enqueued(job, now)])], queued=queued, now=now
                    )
                else:
                    self.store.push(job.queue, [_enqueued(job, now)])
            return job.jid

        return push

    def _tracked(self, job: JobRecord) -> bool:
        return self.config.track_status or job.extra.get("track_status") is True

    def _push_batch(self, jobs: list[JobRecord]) -> list[str | None]:
        mode = testing.current_mode()
        if mode is not None:
            return [mode.push(job) for job in jobs]
        collected: dict[str, list[str]] = {}

        def collect(job: JobRecord) -> str | None:
            collected.setdefault(job.queue, []).append(_enqueued(job, self._clock()))
            return job.jid

        chain = client_chain(self.config.client_middleware, collect)
        jids = [chain(job) for job in jobs]
        queued = [jid for job, jid in zip(jobs, jids, strict=True) if jid and self._tracked(job)]
        with self._redis_errors():
            self.store.push_groups(collected.items(), queued=queued, now=self._clock())
        return jids

    @contextmanager
    def _redis_errors(self) -> Iterator[None]:
        try:
            yield
        except (redis.ConnectionError, redis.TimeoutError) as error:
            url = describe(self.config.resolved_redis_url())
            raise RedisUnavailableError(
                f"can't enqueue: Redis at {url} is unavailable ({error})"
            ) from error


def _enqueued(job: JobRecord, now: float) -> str:
    return payload.encode(attrs.evolve(job, enqueued_at=now))


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
