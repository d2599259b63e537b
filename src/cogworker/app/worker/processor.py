"""Running one job and settling it: ack, retry, dead or discard.

gather → decide → apply: the job's run and its `retry_in` answer are
gathered here, `domain.settlement.settle` decides everything the run's end
writes, and the `Settler` writes it in one script that first checks the job
is still this process's.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable

import attrs
import redis
from returns.pipeline import is_successful

from cogworker.adapters import user_hooks
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.run import RunStore
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.worker.running import Attempt, Runner
from cogworker.app.worker.settler import Settler
from cogworker.app.worker.state import RunningJob, WorkerState
from cogworker.domain import failure, payload, settlement, unique
from cogworker.domain import status as job_status
from cogworker.domain.job import JobRecord
from cogworker.domain.retries import JITTER_SPAN


@attrs.define
class Processor:
    """Runs jobs handed to it and writes their outcomes."""

    runs: RunStore
    settler: Settler
    config: Config
    state: WorkerState
    logger: logging.Logger
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)

    def process(self, fetched: Fetched) -> None:
        """Run one fetched job to its settled outcome; death hooks run last, once it is safe."""
        decoded = payload.decode(fetched.raw)
        if not is_successful(decoded):
            self.settler.file_unparseable(fetched, decoded.failure())
            return
        job = decoded.unwrap()
        if not self._may_start(job, fetched):
            return
        thread = threading.current_thread().name
        running_lock = settlement.held_locks(job).running_lock
        held = (running_lock, job.jid) if running_lock else None
        self.state.started(
            thread,
            RunningJob(job.jid, job.class_name, fetched.queue, fetched.raw, self.clock()),
            held,
        )
        try:
            notice = self._run_and_settle(job, fetched)
        finally:
            self.state.finished(thread)
        if notice is not None:
            notify(notice, self.config.death_handlers, self.logger)

    def _may_start(self, job: JobRecord, fetched: Fetched) -> bool:
        """Unique locks at the start of a run: let go (until_executing) or take (while_executing).

        A while_executing job whose lock a duplicate holds goes back to the
        scheduled set for a little while instead of running alongside it.
        """
        held = settlement.held_locks(job)
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
            deferred = self.runs.defer(
                self.state.identity, fetched, self.clock() + unique.BUSY_RETRY_SECONDS
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

    def _release(self, lock: str, jid: str) -> None:
        try:
            self.runs.release_lock(lock, jid)
        except redis.RedisError:
            self.state.defer_release(lock, jid)  # the reconciler lets go of it later

    def _run_and_settle(self, job: JobRecord, fetched: Fetched) -> DeathNotice | None:
        # The fields of a line at INFO are built only when INFO is on: two lines per job.
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info("start", extra=_log_fields(job, fetched.queue))
        self._mark_working(job)
        attempt = self._run(job, fetched.queue)
        run = settlement.Run(
            job=job,
            queue=fetched.queue,
            process=self.state.identity,
            started_at=attempt.started_at,
            ended_at=attempt.ended_at,
        )
        try:
            end = self._end_of(job, attempt)
        except BaseException as error:
            # Gathering runs user code (a retry_in hook asked late, an exception's
            # own __str__): whatever it raises, the run is still filed, never left
            # on the in-progress list to run again uncounted at the next start.
            end = self._end_despite(job, attempt, error)
        decided = self._settle(run, end)
        if isinstance(decided, settlement.Ack):
            self.settler.write_ack(fetched, decided)
            if self.logger.isEnabledFor(logging.INFO):
                self.logger.info("done", extra=_log_fields(job, fetched.queue, attempt))
            return None

        def interrupted() -> settlement.Failure:
            again = settlement.settle(
                run, end, self._keeping, now=self.clock(), jitter=0.0, interrupted=True
            )
            assert not isinstance(again, settlement.Ack)  # a failure stays one
            return again

        written, notice = self.settler.write_failure(fetched, attempt, decided, interrupted)
        if written:
            self._log_failure(job, fetched, attempt, end, decided)
        return notice

    def _log_failure(
        self,
        job: JobRecord,
        fetched: Fetched,
        attempt: Attempt,
        end: settlement.RunEnd,
        decided: settlement.Failure,
    ) -> None:
        error = end.error.summary if isinstance(end, settlement.Raised) else ""
        self.logger.warning(
            "fail",
            extra={
                **_log_fields(job, fetched.queue, attempt),
                "error": error,
                "reason": settlement.attempt_outcome(decided),
            },
        )

    def _end_of(self, job: JobRecord, attempt: Attempt) -> settlement.RunEnd:
        if attempt.error is None:
            return settlement.Returned()
        answer = attempt.answer
        if answer is None:
            answer = self._ask(job, attempt.error, attempt.job_class)
        return settlement.Raised(error=user_hooks.error_record(attempt.error), answer=answer)

    def _end_despite(
        self, job: JobRecord, attempt: Attempt, error: BaseException
    ) -> settlement.RunEnd:
        """Gathering the run's end raised `error`: a failure, settled by the retry budget alone."""
        self.logger.error(
            "settling the run raised %s; filed as a failure without asking retry_in",
            user_hooks.summary(error),
            exc_info=error,
            extra={"jid": job.jid, "class": job.class_name, "reason": "settle-error"},
        )
        return settlement.Raised(error=user_hooks.error_record(attempt.error or error))

    def _settle(self, run: settlement.Run, end: settlement.RunEnd) -> settlement.Settlement:
        decided = settlement.settle(
            run, end, self._keeping, now=self.clock(), jitter=self.rng.random() * JITTER_SPAN
        )
        note = None if isinstance(decided, settlement.Ack) else decided.note
        if note is not None:
            level = logging.ERROR if note.level == "error" else logging.WARNING
            self.logger.log(
                level, note.text, extra={"jid": run.job.jid, "class": run.job.class_name}
            )
        return decided

    def _run(self, job: JobRecord, queue: str) -> Attempt:
        runner = Runner(
            middleware=self.config.server_middleware,
            identity=self.state.identity,
            clock=self.clock,
            job_modules=self.config.job_modules,
        )
        return runner.run(job, queue, lambda error, job_class: self._ask(job, error, job_class))

    def _ask(
        self, job: JobRecord, error: BaseException, job_class: type | None
    ) -> failure.HookAnswer:
        hook = getattr(job_class, "retry_in", None)
        if hook is None or not failure.hook_is_consulted(job, has_hook=True):
            return failure.NO_HOOK
        return user_hooks.ask_retry_in(hook, job.retries_made, error, payload.to_dict(job))

    @property
    def _keeping(self) -> settlement.Keeping:
        return settlement.Keeping(
            track_all=self.config.track_status,
            history=self.config.history,
            unique_lock_ttl=self.config.unique_lock_ttl,
        )

    def _mark_working(self, job: JobRecord) -> None:
        if not job_status.is_tracked(job, self.config.track_status):
            return
        working = job_status.next_status(None, job_status.Started())
        acker = self.settler.acker
        if acker is not None:  # written with the next batch of acks
            acker.mark_working(job.jid, self.clock())
            return
        try:
            self.runs.set_status(job.jid, working, self.clock())
        except redis.RedisError as error:
            # Informational only: the run goes ahead, the outcome's write sets the status again.
            self.logger.warning("couldn't mark the job working (%s)", error, extra={"jid": job.jid})


def _log_fields(job: JobRecord, queue: str, attempt: Attempt | None = None) -> dict[str, str]:
    """What a job's log lines carry: which job, and once it ran, how long it took."""
    fields = {"jid": job.jid, "class": job.class_name, "queue": queue}
    if attempt is not None:
        fields["duration"] = f"{attempt.ended_at - attempt.started_at:.6f}"
    return fields
