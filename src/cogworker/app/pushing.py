"""`Pusher`: how `Client` writes built jobs to Redis: through the client middleware,
many to a round trip, unique locks taken with the push, the key layout checked at the
first write."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.adapters.layout_store import LayoutStore
from cogworker.adapters.redis_client import RedisClient
from cogworker.app import testing
from cogworker.app.config import Config
from cogworker.app.enqueue_call import batch_outcome, batches, enqueue_errors, with_pushed
from cogworker.app.middleware import client_chain
from cogworker.app.push_batch import PushBatch
from cogworker.domain.job import JobRecord
from cogworker.domain.layout_verdicts import refusal
from cogworker.exceptions import EnqueueError, LayoutError


@attrs.define
class Pusher:
    """Pushes a `Client`'s jobs on `redis`, with the calling thread's store (`stores`;
    `clock`: the client's "now")."""

    config: Config
    redis: RedisClient
    stores: Callable[[], EnqueueStore]
    clock: Callable[[], float]
    _layout_checked: bool = attrs.field(default=False, init=False)

    def push(self, job: JobRecord, at: float | None) -> str | None:
        """Push `job` (now, or at `at`) through the client middleware; the jid, or None
        if stopped."""
        mode = testing.current_mode()
        if mode is not None:
            return mode.push(job)
        middleware = self.config.client_middleware
        return client_chain(middleware, lambda passed: self._push_one(passed, at))(job)

    def push_many(self, jobs: Sequence[JobRecord]) -> list[str | None]:
        """Push `jobs` 1,000 per round trip; the jids in order (the `EnqueueError` of a
        failure part-way naming the jids pushed)."""
        done: list[str | None] = []
        for part in batches(jobs):
            try:
                done.extend(self._push_batch(part))
            except EnqueueError as error:
                raise with_pushed(error, done) from error.__cause__
        return done

    def check_layout(self) -> None:
        """At the first write, refuse a Redis holding another key layout than this code's
        (`LayoutError`, naming the cure); a fresh Redis is given this code's number.  One
        round trip, once per client."""
        if self._layout_checked:
            return
        problem = refusal(LayoutStore(self.redis).admit())
        if problem is not None:
            raise LayoutError(problem)
        self._layout_checked = True

    def _push_one(self, job: JobRecord, at: float | None) -> str | None:
        (pushed,) = self._write([(job, at)])
        return job.jid if pushed else None

    def _push_batch(self, jobs: Sequence[JobRecord]) -> list[str | None]:
        mode = testing.current_mode()
        if mode is not None:
            return [mode.push(job) for job in jobs]
        passed: list[JobRecord] = []

        def collect(job: JobRecord) -> str | None:
            passed.append(job)  # as the middleware left it
            return job.jid

        chain = client_chain(self.config.client_middleware, collect)
        results = [chain(job) for job in jobs]
        return batch_outcome(results, passed, self._write([(job, None) for job in passed]))

    def _write(self, jobs: Sequence[tuple[JobRecord, float | None]]) -> list[bool]:
        """Push jobs (now, or at a time); False where a unique job's lock was already held."""
        if not jobs:  # every job stopped by a middleware: nothing reaches Redis
            return []
        now = self.clock()
        batch = PushBatch.of(jobs, now, self.config)
        with enqueue_errors(self.config, batch.jids):
            self.check_layout()
            store = self.stores()
            if batch.is_one_plain_push():
                store.push(*batch.only_push())
                return [True] * len(jobs)
            replies = batch.replies_by_jid(store.push_unique(batch.unique, now))
            queued = batch.queued(replies)
            store.push_all(
                batch.groups, batch.scheduled, queued=queued, now=now, indexed=batch.indexed
            )
        return batch.pushed(replies)
