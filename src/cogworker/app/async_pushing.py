"""`AsyncPusher`: `Pusher` for `AsyncClient`, awaited: the same middleware, round trips,
unique locks and layout check, sent with redis.asyncio."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import attrs

from cogworker.adapters.jobs.enqueue import AsyncEnqueueStore
from cogworker.adapters.layout_store import admit_async
from cogworker.adapters.redis_client import AsyncRedisClient
from cogworker.app import testing
from cogworker.app.config import Config
from cogworker.app.enqueue_call import batch_outcome, batches, enqueue_errors, with_pushed
from cogworker.app.middleware import async_client_chain
from cogworker.app.push_batch import PushBatch
from cogworker.domain.job import JobRecord
from cogworker.domain.layout_verdicts import refusal
from cogworker.exceptions import EnqueueError, LayoutError


@attrs.define
class AsyncPusher:
    """Pushes an `AsyncClient`'s jobs on `redis` (`clock`: the client's "now")."""

    config: Config
    redis: AsyncRedisClient
    store: AsyncEnqueueStore
    clock: Callable[[], Awaitable[float]]
    _layout_checked: bool = attrs.field(default=False, init=False)

    async def push(self, job: JobRecord, at: float | None) -> str | None:
        """Push `job` (now, or at `at`) through the client middleware; the jid, or None
        if stopped."""
        mode = testing.current_mode()
        if mode is not None:
            return await mode.apush(job)

        async def push_one(passed: JobRecord) -> str | None:
            (pushed,) = await self._write([(passed, at)])
            return passed.jid if pushed else None

        return await async_client_chain(self.config.client_middleware, push_one)(job)

    async def push_many(self, jobs: Sequence[JobRecord]) -> list[str | None]:
        """Push `jobs` 1,000 per round trip; the jids in order (see `Pusher.push_many`)."""
        done: list[str | None] = []
        for batch in batches(jobs):
            try:
                done.extend(await self._push_batch(batch))
            except EnqueueError as error:
                raise with_pushed(error, done) from error.__cause__
        return done

    async def check_layout(self) -> None:
        """At the first write, refuse a Redis holding another key layout than this code's
        (see `Pusher.check_layout`)."""
        if self._layout_checked:
            return
        problem = refusal(await admit_async(self.redis))
        if problem is not None:
            raise LayoutError(problem)
        self._layout_checked = True

    async def _push_batch(self, jobs: Sequence[JobRecord]) -> list[str | None]:
        mode = testing.current_mode()
        if mode is not None:
            return [await mode.apush(job) for job in jobs]
        passed: list[JobRecord] = []

        async def collect(job: JobRecord) -> str | None:
            passed.append(job)  # as the middleware left it
            return job.jid

        chain = async_client_chain(self.config.client_middleware, collect)
        results = [await chain(job) for job in jobs]
        return batch_outcome(results, passed, await self._write([(job, None) for job in passed]))

    async def _write(self, jobs: Sequence[tuple[JobRecord, float | None]]) -> list[bool]:
        """Push jobs (now, or at a time); False where a unique job's lock was already held."""
        if not jobs:  # every job stopped by a middleware: nothing reaches Redis
            return []
        now = await self.clock()
        batch = PushBatch.of(jobs, now, self.config)
        with enqueue_errors(self.config, batch.jids):
            await self.check_layout()
            if batch.is_one_plain_push():
                await self.store.push(*batch.only_push())
                return [True] * len(jobs)
            replies = batch.replies_by_jid(await self.store.push_unique(batch.unique, now))
            queued = batch.queued(replies)
            await self.store.push_all(
                batch.groups, batch.scheduled, queued=queued, now=now, indexed=batch.indexed
            )
        return batch.pushed(replies)
