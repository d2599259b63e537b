"""`Client`: puts jobs on their queues (now, later, or many at once)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import attrs
import redis

from cogworker.adapters import queue_pause, results, tracking
from cogworker.adapters.batch_store import BatchStore
from cogworker.adapters.connection import connect
from cogworker.adapters.jobs.cancel import CancelStore
from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.adapters.per_thread import PerThread, thread_clients
from cogworker.adapters.periodic_store import PeriodicStore
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.redis_clock import RedisClock
from cogworker.app import testing
from cogworker.app.batches import Batch, CallbackClass, checked_callbacks, open_batch
from cogworker.app.cancelling import CancelResult, cancel
from cogworker.app.config import Config
from cogworker.app.enqueue_call import due_time, enqueue_failure, read_errors
from cogworker.app.job_base import JobBase
from cogworker.app.job_record import Expiry, build_job, build_jobs, check_jid
from cogworker.app.periodic_runs import RunNow, run_now
from cogworker.app.pushing import Pusher
from cogworker.app.results import checked_timeout, value_of
from cogworker.domain.batches import BatchStatus
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.domain.queues import checked_name

T = TypeVar("T")


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
        client: RedisClient | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`clock`: what "now" is for created, enqueued and due times (default: Redis's)."""
        self.config = config
        target = config.redis_target()
        with read_errors(config, "can't connect"):  # a cluster's client connects when made
            self._shared = client or connect(target, connections="per-thread")
        # Made here, each thread sends on a connection of its own (`per_thread`);
        # a caller's client is used as it is.
        self._clients = (
            thread_clients(self._shared) if client is None else PerThread(lambda: self._shared)
        )
        store = EnqueueStore(
            self._shared, status_ttl=config.retention.status_ttl, replication=target.replication
        )
        # Each thread's store pushes on its own client; all share which queues were
        # registered (the same `Registrations`).
        stores = PerThread(lambda: attrs.evolve(store, client=self.redis))
        self._redis_clock = clock or RedisClock(self._shared)
        self._pusher = Pusher(config, self._shared, stores, self._clock)

    @property
    def redis(self) -> RedisClient:
        """The calling thread's client of this client's Redis."""
        return self._clients()

    def enqueue(
        self,
        job_class: type[JobBase],
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
        job_class: type[JobBase],
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
        job_class: type[JobBase],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run at `at`, a unix timestamp or an aware datetime (now if past);
        `expires_in` counts from then."""
        due = due_time(at)
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at, due=due)
        return self.push(self._build(job_class, args, jid, expiry), at=due)

    def enqueue_many(
        self,
        job_class: type[JobBase],
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
        jobs = build_jobs(
            job_class,
            list(args_list),
            jids,
            self._clock(),
            lock_ttl=self.config.unique_lock_ttl,
            expiry=expiry,
            keep_result=self.config.keep_result,
        )
        return self._pusher.push_many(jobs)

    def _clock(self) -> float:
        """Now, on Redis's clock; in a testing mode (no Redis), on this host's."""
        return time.time() if testing.current_mode() is not None else self._redis_clock()

    def _build(
        self,
        job_class: type[JobBase],
        args: Sequence[JSON],
        jid: str | None,
        expiry: Expiry | None = None,
    ) -> JobRecord:
        lock_ttl = self.config.unique_lock_ttl
        return build_job(
            job_class, args, self._clock(), lock_ttl=lock_ttl, jid=jid, expiry=expiry,
            keep_result=self.config.keep_result,
        )  # fmt: skip

    def push(self, job: JobRecord, *, at: float | None = None) -> str | None:
        """Push a built record through the client middleware; the jid, or None if stopped."""
        return self._pusher.push(job, at)

    def enqueue_periodic(self, name: str) -> RunNow:
        """Enqueue a run of the periodic job `name` now, outside its schedule (its ticks
        are unchanged), as its ticks' runs go: through the client middleware, with its
        class's unique lock and status tracking, and only while its previous run isn't
        queued or running.  Reads the schedule the workers keep in Redis (testing modes
        included)."""
        try:
            self._pusher.check_layout()
            return run_now(PeriodicStore(self.redis), self.config, name, self._clock())
        except redis.RedisError as error:
            failure = enqueue_failure(self.config, error, ())
            if failure is None:
                raise
            raise failure from error

    def cancel(self, jid: str) -> CancelResult:
        """Cancel the job `jid`: taken off if it waits, told to stop if it runs; what
        happened.  A jid that can't be one is a ValueError."""
        store = CancelStore(self.redis, self.config.retention)
        return cancel(store, self.config.keeping, check_jid(jid), self._clock())

    def batch(
        self,
        *,
        on_success: CallbackClass | None = None,
        on_complete: CallbackClass | None = None,
        args: Sequence[JSON] = (),
    ) -> Batch:
        """A new batch: `with client.batch(on_success=Cls) as batch: batch.enqueue(...)`.

        `on_complete` runs once every member ended (succeeded, dead, discarded,
        cancelled, expired), `on_success` once all of them succeeded; each runs
        once, with the batch's id and then `args` (docs/batches.md).  A callback
        a worker can't import is an UnknownJobClassError naming it."""
        callbacks = checked_callbacks(on_success, on_complete, args)
        self._pusher.check_layout()
        return self._call(
            "can't open a batch",
            lambda: open_batch(
                BatchStore(self.redis),
                self._build,
                self.push,
                self._pusher.push_many,
                self._clock,
                callbacks,
                args,
            ),
        )

    def batch_status(self, bid: str) -> BatchStatus | None:
        """A batch's status (members, pending, succeeded, failed, callbacks fired), or None
        if there is no such batch or it has expired."""
        return self._call("can't read a batch", lambda: BatchStore(self.redis).status(bid))

    def close(self) -> None:
        """Close this client's connections (every thread's)."""
        self._shared.close()

    def status(self, jid: str) -> str | None:
        """A tracked job's status (queued, working, retrying, complete, failed, dead,
        discarded), or None if it isn't tracked or has expired."""
        return self._call("can't read a status", lambda: tracking.status(self.redis, jid))

    def result(self, jid: str, timeout: float | None = None) -> JSON:
        """What the job `jid` returned, waiting up to `timeout` seconds (None: as long as it
        takes; 0: not at all) for it to end, without polling (docs/results.md).

        Raises `JobResultError` if it ended without a value (dead, killed,
        discarded, cancelled, expired: the outcome, error class and message are
        its attributes), `ResultTimeoutError` if it didn't end in time, and
        `ResultNotFoundError` if no job of that jid keeps a result (its class
        doesn't set `keep_result`, or the result expired or was evicted).
        """
        checked, wait = check_jid(jid), checked_timeout(timeout)
        mode = testing.current_mode()
        if mode is not None:
            return value_of(checked, mode.result(checked), wait)
        doing = f"can't read the result of job {checked}"
        found = self._call(doing, lambda: results.wait(self.redis, checked, wait))
        return value_of(checked, found, wait)

    def pause(self, queue: str) -> bool:
        """Pause `queue` for every worker: none takes a job from it once this returns (jobs
        already taken finish); enqueues and periodic ticks still land on it.  True if it
        was running until now.  A name that can't be a queue's is a ValueError."""
        name = checked_name(queue)
        (changed,) = self._call(
            f"can't pause queue {name!r}", lambda: queue_pause.pause(self.redis, [name])
        )
        return changed

    def resume(self, queue: str) -> bool:
        """Let workers take jobs from `queue` again, from their next fetch; True if it was
        paused until now."""
        name = checked_name(queue)
        (changed,) = self._call(
            f"can't resume queue {name!r}", lambda: queue_pause.resume(self.redis, [name])
        )
        return changed

    def paused_queues(self) -> frozenset[str]:
        """The names of the paused queues."""
        return self._call("can't read the paused queues", lambda: queue_pause.paused(self.redis))

    def _call(self, doing: str, call: Callable[[], T]) -> T:
        """`call()`, a Redis failure raised as the error saying what it stopped (`doing`)."""
        with read_errors(self.config, doing):
            return call()
