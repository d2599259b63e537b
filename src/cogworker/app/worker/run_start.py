"""A run's start: its per-key limit's place taken, the unique lock let go of
(until_executing) or taken (while_executing), and a tracked job marked working.

A job whose limit is full, or a while_executing job whose lock a duplicate
holds, goes back to the scheduled set for a little while instead of running.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import attrs
import redis

from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.run import RunStore
from cogworker.app.config import Config
from cogworker.app.worker.acker import Acker
from cogworker.app.worker.limit_gate import LimitGate
from cogworker.app.worker.state import WorkerState
from cogworker.domain import key_limits, locks, unique
from cogworker.domain import status as job_status
from cogworker.domain.job import JobRecord


@attrs.define
class RunStart:
    """What a worker process writes as a run starts."""

    runs: RunStore
    config: Config
    state: WorkerState
    logger: logging.Logger
    #: Marks tracked jobs working with its next batch; None: written at once.
    acker: Acker | None = None
    clock: Callable[[], float] = time.time
    #: Takes a limited job's place; None: no job's limit is looked at.
    gate: LimitGate | None = None

    def writes_first(self, job: JobRecord) -> bool:
        """Whether `may_start` writes to Redis for `job` (it has a unique lock or a limit)."""
        return bool(locks.held_locks(job).unique_lock) or key_limits.FIELD in job.extra

    def may_start(self, job: JobRecord, fetched: Fetched) -> bool:
        """Take the job's limit place, let go of or take its unique lock; False if it
        mustn't run now."""
        admitted = None if self.gate is None else self.gate.admit(job, fetched)
        if admitted is False:
            return False
        if self._may_lock(job, fetched):
            return True
        if admitted and self.gate is not None:
            self.gate.let_go(job.jid)
        return False

    def let_go_unrun(self, fetched: Fetched) -> None:
        """Let go of the place the fetch took for a job that won't run (unreadable, expired)."""
        place = fetched.place
        if self.gate is not None and place is not None and place.holders:
            self.gate.let_go(place.jid)

    def _may_lock(self, job: JobRecord, fetched: Fetched) -> bool:
        held = locks.held_locks(job)
        mode, lock = held.unique_mode, held.unique_lock
        if not lock:
            return True
        if unique.released_at_start(mode):
            self._release(lock, job.jid)
        if not unique.held_while_running(mode):
            return True
        try:
            ttl = unique.ttl_of(job.extra, self.config.unique_lock_ttl)
            if self.runs.take_lock(lock, job.jid, ttl):
                return True
            owner = None if self.config.fetch == "basic" else self.state.identity
            deferred = self.runs.defer(
                owner, fetched, self.clock() + unique.BUSY_RETRY_SECONDS, jid=job.jid
            )
        except redis.RedisError as error:
            self.logger.warning("couldn't check the job's lock (%s); it stays in progress", error)
            return False  # left on the in-progress list: requeued at shutdown, or recovered
        self.state.release(fetched.raw)
        self.logger.info(
            "a duplicate is running; put back for %.0fs",
            unique.BUSY_RETRY_SECONDS,
            extra={"jid": job.jid, "reason": "while-executing" if deferred else "lost-ownership"},
        )
        return False

    def mark_working(self, job: JobRecord, queue: str) -> None:
        """A tracked job's "working" status (with the next batch of acks, if batched), in
        the slot of `queue`, the one it was fetched from (where its settlement writes)."""
        if not job_status.is_tracked(job, self.config.track_status):
            return
        if self.acker is not None:
            self.acker.mark_working(job.jid, queue, self.clock())
            return
        working = job_status.next_status(None, job_status.Started())
        try:
            self.runs.set_status(queue, job.jid, working, self.clock())
        except redis.RedisError as error:
            # Informational only: the run goes ahead, the outcome's write sets the status again.
            self.logger.warning("couldn't mark the job working (%s)", error, extra={"jid": job.jid})

    def _release(self, lock: str, jid: str) -> None:
        try:
            self.runs.release_lock(lock, jid)
        except redis.RedisError:
            self.state.defer_release(lock, jid)  # the reconciler lets go of it later
