"""`AsyncClient`: `Client` for asyncio code, on redis.asyncio.

It builds, checks and sorts jobs as `Client` does (`job_record`, `PushBatch`,
`enqueue_call`) and sends the same Lua scripts with the same keys and
arguments (`adapters/jobs/enqueue.py`, through `AsyncPusher`, its `Pusher`);
only the sending is awaited.  Like every redis.asyncio client, it belongs to
the event loop it is first used on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Awaitable, Iterable, Sequence
from types import TracebackType
from typing import NoReturn, Self, TypeVar

from cogworker.adapters import queue_pause, results, tracking
from cogworker.adapters.batch_store import BatchStore
from cogworker.adapters.connection import connect, connect_async
from cogworker.adapters.jobs.cancel import CancelStore
from cogworker.adapters.jobs.enqueue import AsyncEnqueueStore
from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient
from cogworker.adapters.redis_clock import AsyncRedisClock
from cogworker.app import testing
from cogworker.app.async_batches import AsyncBatch
from cogworker.app.async_pushing import AsyncPusher
from cogworker.app.batches import Batch, CallbackClass, checked_callbacks, open_batch
from cogworker.app.cancelling import CancelResult, cancel
from cogworker.app.config import Config
from cogworker.app.enqueue_call import due_time, read_errors
from cogworker.app.job_base import JobBase
from cogworker.app.job_record import Expiry, build_job, build_jobs, check_jid
from cogworker.app.open_calls import OpenCalls, while_open
from cogworker.app.results import checked_timeout, value_of
from cogworker.domain.batches import BatchStatus
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.domain.queues import checked_name

T = TypeVar("T")


class AsyncClient:
    """Enqueues jobs on the Redis of a `Config`, from asyncio code.  Share one per event
    loop; close it with `aclose`, or use ``async with AsyncClient(config) as client:``.

    Its methods are `Client`'s, awaited: the same argument checks, unique
    locks taken with the push, `jid=` / `jids=` making a repeated enqueue
    safe, and `EnqueueError`s naming what was pushed.  Client middleware
    may be sync or ``async def`` (see `cogworker.app.middleware`).
    """

    def __init__(self, config: Config, *, client: AsyncRedisClient | None = None) -> None:
        self.config = config
        target = config.redis_target()
        self.redis = client or connect_async(target)
        self.store = AsyncEnqueueStore(
            self.redis, status_ttl=config.retention.status_ttl, replication=target.replication
        )
        self._redis_clock = AsyncRedisClock(self.redis)
        self._blocking_client: RedisClient | None = None
        self._pusher = AsyncPusher(config, self.redis, self.store, self._clock)
        self.open_calls = OpenCalls("AsyncClient")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    @while_open
    async def enqueue(
        self,
        job_class: type[JobBase],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Put a run of `job_class` on its queue; the jid, or None if a middleware stopped it
        (`expires_in` / `expires_at` as for `Client.enqueue`)."""
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at)
        return await self._push(await self._build(job_class, args, jid, expiry), None)

    @while_open
    async def enqueue_in(
        self,
        seconds: float,
        job_class: type[JobBase],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run `seconds` from now (`expires_in` counts from then)."""
        at = await self._clock() + seconds
        return await self._enqueue_at(at, job_class, args, jid, expires_in, expires_at)

    @while_open
    async def enqueue_at(
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
        return await self._enqueue_at(at, job_class, args, jid, expires_in, expires_at)

    async def _enqueue_at(
        self,
        at: float | dt.datetime,
        job_class: type[JobBase],
        args: Sequence[JSON],
        jid: str | None,
        expires_in: float | None,
        expires_at: float | None,
    ) -> str | None:
        due = due_time(at)
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at, due=due)
        return await self._push(await self._build(job_class, args, jid, expiry), due)

    @while_open
    async def enqueue_many(
        self,
        job_class: type[JobBase],
        args_list: Iterable[Sequence[JSON]],
        *,
        jids: Sequence[str] | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> list[str | None]:
        """Enqueue one run per argument list, 1,000 per round trip; the jids in order
        (see `Client.enqueue_many`)."""
        now = await self._clock()
        lock_ttl = self.config.unique_lock_ttl
        expiry = Expiry(expires_in=expires_in, expires_at=expires_at)
        jobs = build_jobs(
            job_class, list(args_list), jids, now, lock_ttl=lock_ttl, expiry=expiry,
            keep_result=self.config.keep_result,
        )  # fmt: skip
        return await self._pusher.push_many(jobs)

    @while_open
    async def push(self, job: JobRecord, *, at: float | None = None) -> str | None:
        """Push a built record through the client middleware; the jid, or None if stopped."""
        return await self._push(job, at)

    async def _push(self, job: JobRecord, at: float | None) -> str | None:
        return await self._pusher.push(job, at)

    @while_open
    async def cancel(self, jid: str) -> CancelResult:
        """Cancel the job `jid` (see `Client.cancel`): taken off if it waits, told to stop
        if it runs; what happened.  A jid that can't be one is a ValueError.

        A cancel searches the queues and every process's jobs, many round trips: it runs
        `Client.cancel`'s code on a worker thread, over a blocking connection of this
        client's (made at its first cancel), and the event loop carries on meanwhile.
        """
        checked, now = check_jid(jid), await self._clock()
        store = CancelStore(self._blocking(), self.config.retention)
        return await asyncio.to_thread(cancel, store, self.config.keeping, checked, now)

    def batch(
        self,
        *,
        on_success: CallbackClass | None = None,
        on_complete: CallbackClass | None = None,
        args: Sequence[JSON] = (),
    ) -> AsyncBatch:
        """A new batch (see `Client.batch`), opened by `async with client.batch(...) as
        batch:`, filled with `await batch.enqueue(...)`.  Its callbacks are checked now."""
        callbacks = checked_callbacks(on_success, on_complete, args)

        async def opened() -> Batch:
            await self._pusher.check_layout()
            now, lock_ttl = await self._clock(), self.config.unique_lock_ttl

            def build(job_class: type[JobBase], args: Sequence[JSON], jid: str | None) -> JobRecord:
                return build_job(job_class, args, now, lock_ttl=lock_ttl, jid=jid)

            store = BatchStore(self._blocking())
            return await asyncio.to_thread(
                open_batch, store, build, _not_pushed, _not_pushed, time.time, callbacks, args
            )

        return AsyncBatch(opened, lambda c, a, j: self._build(c, a, j, Expiry()), self.push)

    @while_open
    async def batch_status(self, bid: str) -> BatchStatus | None:
        """A batch's status, or None (see `Client.batch_status`)."""
        return await asyncio.to_thread(BatchStore(self._blocking()).status, bid)

    @while_open
    async def status(self, jid: str) -> str | None:
        """A tracked job's status, or None (see `Client.status`)."""
        return await self._call("can't read a status", tracking.status_async(self.redis, jid))

    @while_open
    async def result(self, jid: str, timeout: float | None = None) -> JSON:
        """`Client.result`, awaited: the job's value, waiting without polling (each wait
        holds one of this client's connections while it lasts)."""
        checked, wait = check_jid(jid), checked_timeout(timeout)
        mode = testing.current_mode()
        if mode is not None:
            return value_of(checked, mode.result(checked), wait)
        doing = f"can't read the result of job {checked}"
        waited = self.open_calls.interruptible(results.wait_async(self.redis, checked, wait))
        found = await self._call(doing, waited)
        return value_of(checked, found, wait)

    @while_open
    async def pause(self, queue: str) -> bool:
        """Pause `queue` for every worker (see `Client.pause`); True if it was running."""
        name = checked_name(queue)
        paused = queue_pause.pause_async(self.redis, [name])
        (changed,) = await self._call(f"can't pause queue {name!r}", paused)
        return changed

    @while_open
    async def resume(self, queue: str) -> bool:
        """Let workers take jobs from `queue` again (see `Client.resume`); True if it was
        paused."""
        name = checked_name(queue)
        resumed = queue_pause.resume_async(self.redis, [name])
        (changed,) = await self._call(f"can't resume queue {name!r}", resumed)
        return changed

    @while_open
    async def paused_queues(self) -> frozenset[str]:
        """The names of the paused queues."""
        return await self._call(
            "can't read the paused queues", queue_pause.paused_async(self.redis)
        )

    async def _call(self, doing: str, call: Awaitable[T]) -> T:
        """`await call`, a Redis failure raised as the error saying what it stopped."""
        with read_errors(self.config, doing):
            return await call

    async def aclose(self) -> None:
        """Close this client's connections, once the calls in flight have ended (a result's
        wait is interrupted: it raises `ClientClosedError`); calls after this one raise
        `ClientClosedError` too."""
        await self.open_calls.close()
        if self._blocking_client is not None:
            self._blocking_client.close()
        await self.redis.aclose()

    def _blocking(self) -> RedisClient:
        """The blocking client of cancels, made at the first."""
        if self._blocking_client is None:
            self._blocking_client = connect(self.config.redis_target())
        return self._blocking_client

    async def _clock(self) -> float:
        """Now, on Redis's clock; in a testing mode (no Redis), on this host's."""
        return time.time() if testing.current_mode() is not None else await self._redis_clock()

    async def _build(
        self, job_class: type[JobBase], args: Sequence[JSON], jid: str | None, expiry: Expiry
    ) -> JobRecord:
        now = await self._clock()
        lock_ttl = self.config.unique_lock_ttl
        return build_job(
            job_class, args, now, lock_ttl=lock_ttl, jid=jid, expiry=expiry,
            keep_result=self.config.keep_result,
        )  # fmt: skip


def _not_pushed(job: object) -> NoReturn:
    """An `AsyncBatch` pushes its members itself (`AsyncBatch.enqueue`), never its Batch."""
    raise RuntimeError("an AsyncBatch pushes its members with the async client")
