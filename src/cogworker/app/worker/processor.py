"""Running one job and settling it: ack, retry, dead or discard.

gather → decide → apply: the job's run and its `retry_in` answer are
gathered here, `domain.settlement.settle` decides everything the run's end
writes, and the `Settler` writes it (an ack or a retry with the acker's next
batch) in one script that first checks the job is still this process's.

A sync job runs on the processor thread that took it.  An async job
(`async def perform`) is handed to the process's event loop once it has a
place there, and the thread goes back for the next job; it is settled the
same way, a failure's write and its death hooks on a thread of their own.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import threading
import time
from collections.abc import Callable

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import logs
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.job_base import JobBase, is_async_job
from cogworker.app.worker import lease, run_ends, run_logs
from cogworker.app.worker.event_loop import Start
from cogworker.app.worker.handoff import Taken
from cogworker.app.worker.run_start import RunStart
from cogworker.app.worker.running import Ask, Attempt, Runner, asker, async_asker
from cogworker.app.worker.settler import Settler
from cogworker.app.worker.state import RunningJob, WorkerState
from cogworker.domain import deadlines, locks, settlement
from cogworker.domain.job import JobRecord
from cogworker.domain.retries import JITTER_SPAN


@attrs.define
class Processor:
    """Runs jobs handed to it and writes their outcomes."""

    starts: RunStart
    settler: Settler
    config: Config
    state: WorkerState
    logger: logging.Logger
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)
    _keeping: settlement.Keeping = attrs.field(init=False)
    _runner: Runner = attrs.field(init=False)

    @_keeping.default
    def _keeping_of_config(self) -> settlement.Keeping:
        return self.config.keeping

    def process(self, taken: Taken) -> None:
        """Run one fetched job to its settled outcome; death hooks run last, once it is safe.

        An async job comes here only when this process runs no event loop (see handoff).
        """
        fetched, decoded = taken.fetched, taken.decoded
        if not is_successful(decoded) or taken.expired:
            self.starts.let_go_unrun(fetched)
        if not is_successful(decoded):
            self.settler.file_unparseable(fetched, decoded.failure())
            return
        job = decoded.unwrap()
        if taken.expired:
            self._expire(job, fetched)
            return
        loaded = taken.loaded
        job_class = loaded[0]
        if job_class is not None and is_async_job(job_class):
            loaded = (None, run_ends.no_loop(job_class))
        if not lease.may_start(self.state, fetched, self.logger):
            return
        if not self.starts.may_start(job, fetched):
            return
        thread = threading.current_thread().name
        self._started(thread, job, fetched, job_class)
        with logs.running_job(job.jid, job.class_name):  # its code's log lines name it
            try:
                notice = self._run_and_settle(thread, job, fetched, loaded)
            finally:
                self.state.finished(thread)
                self.state.interrupts.forget(job.jid)
            if notice is not None:
                notify(notice, self.config.death_handlers, self.logger)

    def on_loop(self, job: JobRecord, fetched: Fetched, job_class: type[JobBase]) -> Start:
        """What runs async `job` on the event loop once it has a place there (asked on the
        caller's thread whether its start writes first, so the loop needn't)."""
        if self.starts.writes_first(job):
            return lambda: self._start_on_loop(job, fetched, job_class)
        return lambda: self._run_on_loop(job, fetched, job_class)

    def _expire(self, job: JobRecord, fetched: Fetched) -> None:
        """Drop a job fetched past its expiry, unrun: settled `Expired`."""
        now = self.clock()
        decided = settlement.expire(job, self._keeping, now=now)
        unrun = Attempt(job_class=None, started_at=now, ended_at=now)
        logged = functools.partial(run_logs.expired, self.logger, job, fetched.queue)
        self.settler.write_failure(fetched, unrun, decided, lambda: decided, logged)

    async def _start_on_loop(
        self, job: JobRecord, fetched: Fetched, job_class: type[JobBase]
    ) -> None:
        """Run a job whose start writes first (see `on_loop`), under the lease."""
        if not await lease.may_start_on_loop(self.state, fetched, self.logger):
            return
        try:
            # A unique lock's release or take is a Redis write: on a thread, not on the loop.
            if not await asyncio.to_thread(self.starts.may_start, job, fetched):
                return
        except Exception:  # as in _run_on_loop: left in progress, requeued or recovered
            self.logger.exception("processor error", extra={"jid": job.jid})
            return
        await self._run_on_loop(job, fetched, job_class)

    def _started(
        self, runner: str, job: JobRecord, fetched: Fetched, job_class: type[JobBase] | None
    ) -> None:
        running_lock = locks.held_locks(job).running_lock
        held = (running_lock, job.jid) if running_lock else None
        timeout = run_ends.limit_of(job_class, self.config)
        work = RunningJob(
            job.jid, job.class_name, fetched.queue, fetched.raw, self.clock(), timeout
        )
        self.state.started(runner, work, held)

    def _run_and_settle(
        self,
        runner: str,
        job: JobRecord,
        fetched: Fetched,
        loaded: tuple[type[JobBase] | None, BaseException | None],
    ) -> DeathNotice | None:
        self._begin(job, fetched)
        ask = asker(job)
        attempt = self._runner.run(job, fetched.queue, ask, loaded)
        if not self.state.claim_settlement(runner, job.jid):
            return None  # timed out "hard": filed already, for it (see `watchdog`)
        attempt, timed_out = run_ends.soft_end(self.state.interrupts, self.config, job, attempt)
        return self.settle_attempt(job, fetched, attempt, ask, timed_out)

    def settle_attempt(
        self,
        job: JobRecord,
        fetched: Fetched,
        attempt: Attempt,
        ask: Ask,
        timed_out: deadlines.TimedOut | None = None,
    ) -> DeathNotice | None:
        """Settle and write the run `attempt` of `job` (on the calling thread); the death
        hooks' notice, if it went to dead."""
        try:
            end = run_ends.cancelled_end(self.state.interrupts, job, attempt)
            if end is None:
                answer = attempt.answer
                if attempt.error is not None and answer is None:
                    answer = ask(attempt.error, attempt.job_class)
                end = run_ends.end_of(attempt, answer, timed_out)
        except BaseException as error:
            end = run_logs.end_despite(self.logger, job, attempt, error)
        decided = self._decide(job, fetched, attempt, end)
        if decided is None:
            return None
        interrupted, logged = self._after_write(job, fetched, attempt, end, decided)
        # A hard timeout's process exits next: its failure is filed before it stops.
        at_once = timed_out == "hard"
        return self.settler.write_failure(fetched, attempt, decided, interrupted, logged, at_once)

    async def _run_on_loop(
        self, job: JobRecord, fetched: Fetched, job_class: type[JobBase]
    ) -> None:
        if not await lease.may_start_on_loop(self.state, fetched, self.logger):
            return
        runner = f"loop:{job.jid}"
        self._started(runner, job, fetched, job_class)
        with logs.running_job(job.jid, job.class_name):  # in this task and those it starts
            try:
                notice = await self._run_and_settle_async(runner, job, fetched, job_class)
            except asyncio.CancelledError:
                raise  # a stop: counted as still running when the job is handed back
            except Exception:
                # Not the job's own error (that is settled): it stays in progress, to be
                # requeued at shutdown or recovered as an orphan.
                self.logger.exception("processor error", extra={"jid": job.jid})
                notice = None
            self.state.finished(runner)
            self.state.interrupts.forget(job.jid)
            if notice is not None:
                await asyncio.to_thread(notify, notice, self.config.death_handlers, self.logger)

    async def _run_and_settle_async(
        self, runner: str, job: JobRecord, fetched: Fetched, job_class: type[JobBase]
    ) -> DeathNotice | None:
        self._begin(job, fetched)
        ask = async_asker(job)
        attempt = await self._runner.run_async(job, fetched.queue, job_class, ask)
        if not self.state.claim_settlement(runner, job.jid):
            return None  # timed out "hard": filed already, for it (see `watchdog`)
        attempt, timed_out = run_ends.soft_end(self.state.interrupts, self.config, job, attempt)
        if attempt.error is None:  # returned (within its time limit or not: a success)
            self._ack_later(job, fetched, attempt)
            return None
        try:
            end = run_ends.cancelled_end(self.state.interrupts, job, attempt)
            if end is None:
                answer = attempt.answer
                if attempt.error is not None and answer is None:
                    answer = await ask(attempt.error, job_class)
                end = run_ends.end_of(attempt, answer, timed_out)
        except Exception as error:
            end = run_logs.end_despite(self.logger, job, attempt, error)
        decided = self._decide(job, fetched, attempt, end)
        if decided is None:
            return None
        write = (fetched, attempt, decided, *self._after_write(job, fetched, attempt, end, decided))
        if self.settler.files_later(decided):  # handed over at once: no thread needed
            return self.settler.write_failure(*write)
        return await asyncio.to_thread(self.settler.write_failure, *write)

    @_runner.default
    def _runner_of_config(self) -> Runner:
        return Runner(
            middleware=self.config.server_middleware,
            identity=self.state.identity,
            clock=self.clock,
            job_modules=self.config.job_modules,
            interrupts=self.state.interrupts,
            max_result_bytes=self.config.max_result_bytes,
        )

    def _begin(self, job: JobRecord, fetched: Fetched) -> None:
        run_logs.started(self.logger, job, fetched.queue)
        self.starts.mark_working(job, fetched.queue)

    def _decide(
        self, job: JobRecord, fetched: Fetched, attempt: Attempt, end: settlement.RunEnd
    ) -> settlement.Unsuccessful | None:
        """Settle the run; an ack is handed to the settler here, any other end returned to
        write."""
        decided = settlement.settle(
            run_ends.run_of(job, fetched.queue, attempt, self.state.identity),
            end,
            self._keeping,
            now=self.clock(),
            jitter=self.rng.random() * JITTER_SPAN,
        )
        if isinstance(decided, settlement.Ack):
            self.settler.write_ack(fetched, decided)
            run_logs.done(self.logger, job, fetched.queue, attempt)
            return None
        if isinstance(decided, settlement.Failure) and decided.note is not None:
            run_logs.noted(self.logger, job, decided.note)
        return decided

    def _ack_later(self, job: JobRecord, fetched: Fetched, attempt: Attempt) -> None:
        """Hand over a returned async run's ack, decided and written on the acker's thread:
        the event loop is the thread every async job waits for, the acker's is not."""
        identity = self.state.identity

        def decided() -> settlement.Ack:
            run = run_ends.run_of(job, fetched.queue, attempt, identity)
            returned = run_ends.end_of(attempt, None, None)
            ack = settlement.settle(run, returned, self._keeping, now=attempt.ended_at, jitter=0)
            assert isinstance(ack, settlement.Ack)  # a returned run is acked
            return ack

        self.settler.write_ack_later(fetched, decided, job.jid)
        run_logs.done(self.logger, job, fetched.queue, attempt)

    def _after_write(
        self,
        job: JobRecord,
        fetched: Fetched,
        attempt: Attempt,
        end: settlement.RunEnd,
        decided: settlement.Unsuccessful,
    ) -> tuple[Callable[[], settlement.Unsuccessful], Callable[[], None]]:
        """The end settled again as interrupted, for when its first write fails; its "fail"
        line, once that write filed it (an interrupted write logs its own lines)."""

        def again() -> settlement.Unsuccessful:
            run = run_ends.run_of(job, fetched.queue, attempt, self.state.identity)
            settled = settlement.settle(
                run, end, self._keeping, now=self.clock(), jitter=0.0, interrupted=True
            )
            assert not isinstance(settled, settlement.Ack)  # an unsuccessful end stays one
            return settled

        def logged() -> None:
            run_logs.failed(self.logger, job, fetched.queue, attempt, end, decided)

        return again, logged
