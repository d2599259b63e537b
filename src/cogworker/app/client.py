"""`Client`: puts jobs on their queues (now, later, or many at once)."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import redis

from cogworker.adapters import redis_access, tracking
from cogworker.adapters.connection import connect
from cogworker.adapters.jobs.cancel import CancelStore
from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.adapters.periodic_store import PeriodicStore
from cogworker.adapters.redis_clock import RedisClock
from cogworker.app import testing
from cogworker.app.cancelling import CancelResult, cancel
from cogworker.app.config import Config
from cogworker.app.job import Job
from cogworker.app.job_record import Expiry, build_job, check_jid
from cogworker.app.middleware import client_chain
from cogworker.app.periodic_runs import RunNow, run_now
from cogworker.app.push_batch import PushBatch
from cogworker.domain import queues
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.domain.status import is_tracked
from cogworker.exceptions import (
    EnqueueError,
    EnqueueRefusedError,
    EnqueueUnavailableError,
    RedisRefusedError,
    RedisUnavailableError,
)

#: Jobs per round trip in `enqueue_many`.
BATCH_SIZE = 1_000


class Client:
    """Enqueues jobs on the Redis of a `Config`.  Thread-safe; share one per process.

    Every enqueue takes an optional `jid` of the caller's (`jids` for
    `enqueue_many`): pushing it again while that job is queued, scheduled,
    running or waiting to retry does nothing and returns the jid, so an
    enqueue that raised `EnqueueError` can simply be repeated.
    """

    def __init__(
        self,
        config: Config,
        *,
        client: redis.Redis | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`clock`: what "now" is for created, enqueued and due times (default: Redis's)."""
        self.config = config
        self.redis = client or connect(config.redis_target(), connections="per-thread")
        self.store = EnqueueStore(self.redis, status_ttl=config.retention.status_ttl)
        self._redis_clock = clock or RedisClock(self.redis)

    def enqueue(
        self,
        job_class: type[Job],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Put a run of `job_class` on its queue; the jid, or None if a middleware stopped it.

        `expires_in` (seconds) or `expires_at` (a unix time): if the run hasn't
        started by then, it is dropped as expired (the class's `expires_in` if
        neither is given)."""
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at)
        return self.push(self._build(job_class, args, jid, expiry))

    def enqueue_in(
        self,
        seconds: float,
        job_class: type[Job],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run `seconds` from now (`expires_in` counts from then)."""
        at = self._clock() + seconds
        return self.enqueue_at(
            at, job_class, *args, jid=jid, expires_in=expires_in, expires_at=expires_at
        )

    def enqueue_at(
        self,
        at: float | dt.datetime,
        job_class: type[Job],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run at `at`, a unix timestamp or an aware datetime (now if past);
        `expires_in` counts from then."""
        due = _timestamp(at)
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at, due=due)
        return self.push(self._build(job_class, args, jid, expiry), at=due)

    def enqueue_many(
        self,
        job_class: type[Job],
        args_list: Iterable[Sequence[JSON]],
        *,
        jids: Sequence[str] | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> list[str | None]:
        """Enqueue one run per argument list, 1,000 per round trip; the jids in order
        (`expires_in`/`expires_at` as for `enqueue`, the same for every run).

        Every argument list (and jid) is checked before anything is pushed.
        If Redis fails part-way, the `EnqueueError` names the jids pushed
        and those that may or may not have been.
        """
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at)
        jobs = self._build_many(job_class, list(args_list), jids, expiry)
        done: list[str | None] = []
        for start in range(0, len(jobs), BATCH_SIZE):
            try:
                done.extend(self._push_batch(jobs[start : start + BATCH_SIZE]))
            except EnqueueError as error:
                pushed = [jid for jid in done if jid is not None]
                raise type(error)(
                    error.problem, pushed=pushed, unknown=error.unknown
                ) from error.__cause__
        return done

    def _build_many(
        self,
        job_class: type[Job],
        args_list: list[Sequence[JSON]],
        jids: Sequence[str] | None,
        expiry: Expiry,
    ) -> list[JobRecord]:
        if jids is None:
            return [self._build(job_class, args, None, expiry) for args in args_list]
        if len(jids) != len(args_list):
            raise ValueError(f"{len(jids)} jids for {len(args_list)} argument lists")
        if len(set(jids)) != len(jids):
            twice = sorted({jid for jid in jids if jids.count(jid) > 1})[:5]
            raise ValueError(f"jids given more than once: {twice}")
        pairs = zip(args_list, jids, strict=True)
        return [self._build(job_class, args, jid, expiry) for args, jid in pairs]

    def _clock(self) -> float:
        """Now, on Redis's clock; in a testing mode (no Redis), on this host's."""
        return time.time() if testing.current_mode() is not None else self._redis_clock()

    def _build(
        self,
        job_class: type[Job],
        args: Sequence[JSON],
        jid: str | None,
        expiry: Expiry | None = None,
    ) -> JobRecord:
        lock_ttl = self.config.unique_lock_ttl
        return build_job(job_class, args, self._clock(), lock_ttl=lock_ttl, jid=jid, expiry=expiry)

    def push(self, job: JobRecord, *, at: float | None = None) -> str | None:
        """Push a built record through the client middleware; the jid, or None if stopped."""
        mode = testing.current_mode()
        if mode is not None:
            return mode.push(job)
        middleware = self.config.client_middleware
        return client_chain(middleware, lambda passed: self._push_one(passed, at))(job)

    def enqueue_periodic(self, name: str) -> RunNow:
        """Enqueue a run of the periodic job `name` now, outside its schedule (its ticks
        are unchanged), as its ticks' runs go: through the client middleware, with its
        class's unique lock and status tracking, and only while its previous run isn't
        queued or running.  Reads the schedule the workers keep in Redis (testing modes
        included)."""
        try:
            return run_now(PeriodicStore(self.redis), self.config, name, self._clock())
        except redis.RedisError as error:
            failed = self._failure("can't enqueue", error)
            if failed is None:
                raise
            problem, refused = failed
            raise (EnqueueRefusedError if refused else EnqueueUnavailableError)(problem) from error

    def cancel(self, jid: str) -> CancelResult:
        """Cancel the job `jid`: taken off if it waits, told to stop if it runs; what
        happened.  A jid that can't be one is a ValueError."""
        store = CancelStore(self.redis, self.config.retention)
        return cancel(store, self.config.keeping, check_jid(jid), self._clock())

    def close(self) -> None:
        """Close this client's connections."""
        self.redis.close()

    def status(self, jid: str) -> str | None:
        """A tracked job's status (queued, working, retrying, complete, failed, dead,
        discarded), or None if it isn't tracked or has expired."""
        try:
            return tracking.status(self.redis, jid)
        except redis.RedisError as error:
            failed = self._failure("can't read a status", error)
            if failed is None:
                raise
            problem, refused = failed
            raise (RedisRefusedError if refused else RedisUnavailableError)(problem) from error

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
        for queue in {job.queue for job, _ in jobs}:
            # The class's queue was checked when it was defined; a middleware may have changed it.
            queues.checked_name(queue)
        now = self._clock()
        batch = PushBatch()
        for job, at in jobs:
            batch.add(job, at if at is not None and at > now else None, now, self.config)
        track_all = self.config.track_status
        tracked = [job.jid for job, _ in jobs if is_tracked(job, track_all)]
        try:
            if batch.is_one_plain_push() and not tracked:
                self.store.push(*batch.only_push())
                return [True] * len(jobs)
            replies = dict(
                zip(batch.unique_jids, self.store.push_unique(batch.unique), strict=True)
            )
            # Only a job pushed just now is queued: one pushed before may be running already.
            queued = [jid for jid in tracked if replies.get(jid, 1) == 1]
            self.store.push_all(batch.groups, batch.scheduled, queued=queued, now=now)
        except redis.RedisError as error:
            failed = self._failure("can't enqueue", error)
            if failed is None:
                raise
            problem, refused = failed
            unknown = [job.jid for job, _ in jobs]
            kind = EnqueueRefusedError if refused else EnqueueUnavailableError
            raise kind(problem, unknown=unknown) from error
        return [replies.get(job.jid, 1) != 0 for job, _ in jobs]

    def _failure(self, doing: str, error: redis.RedisError) -> tuple[str, bool] | None:
        """What to say of `error` and whether Redis refused (else it went away); None for
        another error (raised as it is)."""
        where = self.config.redis_target().described()
        refused = redis_access.refusal(error)
        if refused is not None:
            return f"{doing}: {where}: {refused}", True
        if isinstance(error, redis.ConnectionError | redis.TimeoutError):
            return f"{doing}: {where}: Redis is unavailable ({error})", False
        return None


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
