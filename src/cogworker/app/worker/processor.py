"""Running one job and settling it: ack, retry, dead or discard.

gather → decide → apply: the job's record and what happened are gathered
here, the failure decision is the domain's, and the store applies it in one
script that first checks the job is still this process's.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, assert_never

import attrs
import redis
from returns.pipeline import is_successful

from cogworker.adapters import user_hooks
from cogworker.adapters.job_store import Fetched, JobStore, Outcome, OutcomeKind, Settlement
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.job_record import new_jid
from cogworker.app.worker.acker import Acker
from cogworker.app.worker.ownership import report_lost_ownership
from cogworker.app.worker.periodic_watch import EpochWatch
from cogworker.app.worker.running import Attempt, Runner
from cogworker.app.worker.state import RunningJob, WorkerState
from cogworker.domain import failure, payload, records, unique
from cogworker.domain import status as job_status
from cogworker.domain.job import JobRecord, with_failure
from cogworker.domain.retries import JITTER_SPAN


@attrs.frozen(kw_only=True)
class FailedRun:
    """A failed run on its way to being settled."""

    job: JobRecord
    fetched: Fetched
    attempt: Attempt
    #: The record as it will be filed (one more failure counted).
    failed: JobRecord
    decision: failure.FailureDecision


@attrs.define
class Processor:
    """Runs jobs handed to it and writes their outcomes."""

    store: JobStore
    config: Config
    state: WorkerState
    logger: logging.Logger
    reliable: bool = True
    #: Writes acks in batches; None: each ack is written before the next job.
    acker: Acker | None = None
    #: Tells a loss of Redis's data from an orphan recovery when a job is found gone.
    epoch_watch: EpochWatch | None = None
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)

    @property
    def _owner(self) -> str | None:
        # Basic fetch has no in-progress list to check ownership against.
        return self.state.identity if self.reliable else None

    def process(self, fetched: Fetched) -> None:
        """Run one fetched job to its settled outcome; death hooks run last, once it is safe."""
        decoded = payload.decode(fetched.raw)
        if not is_successful(decoded):
            self._file_unparseable(fetched, decoded.failure())
            return
        job = decoded.unwrap()
        if not self._may_start(job, fetched):
            return
        thread = threading.current_thread().name
        running_lock = _text(job.extra.get("running_lock"))
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
        mode, lock = _text(job.extra.get("unique")), _text(job.extra.get("unique_lock"))
        if not lock:
            return True
        if unique.released_at_start(mode):
            self._release(lock, job.jid)
        if not unique.held_while_running(mode):
            return True
        try:
            if self.store.take_lock(lock, job.jid, self._lock_ttl(job)):
                return True
            deferred = self.store.defer(
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
            self.store.release_lock(lock, jid)
        except redis.RedisError:
            self.state.defer_release(lock, jid)  # the reconciler lets go of it later

    def _lock_ttl(self, job: JobRecord) -> float:
        return unique.ttl_of(job.extra, self.config.unique_lock_ttl)

    def _locks(
        self, job: JobRecord, kind: OutcomeKind, score: float, now: float
    ) -> Mapping[str, Any]:
        """What the settlement does with the job's locks (see `Outcome`)."""
        if "unique_lock" not in job.extra and "running_lock" not in job.extra:
            return _NO_LOCKS
        mode, lock = _text(job.extra.get("unique")), _text(job.extra.get("unique_lock"))
        action, ttl = "", 0.0
        if lock and unique.held_until_done(mode):
            action = "extend" if kind == "retry" else "release"
            ttl = unique.retry_ttl(self._lock_ttl(job), score, now)
        elif lock and unique.held_while_running(mode):
            action = "release"
        return {
            "unique_lock": lock if action else "",
            "unique_action": action,
            "lock_ttl": ttl,
            "running_lock": _text(job.extra.get("running_lock")),
        }

    def _run_and_settle(self, job: JobRecord, fetched: Fetched) -> DeathNotice | None:
        # The fields of a line at INFO are built only when INFO is on: two lines per job.
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info("start", extra=_log_fields(job, fetched.queue))
        self._mark_working(job)
        attempt = self._run(job, fetched.queue)
        try:
            return self._settle(job, fetched, attempt)
        except BaseException as error:
            # Settling runs user code too (a retry_in hook, an exception's own
            # __str__): whatever it raises, the run is still filed, never left
            # on the in-progress list to run again uncounted at the next start.
            return self._settle_despite(job, fetched, attempt, error)

    def _settle(self, job: JobRecord, fetched: Fetched, attempt: Attempt) -> DeathNotice | None:
        if attempt.error is None:
            self._settle_success(job, fetched, attempt)
            if self.logger.isEnabledFor(logging.INFO):
                self.logger.info("done", extra=_log_fields(job, fetched.queue, attempt))
            return None
        return self._settle_failure(job, fetched, attempt)

    def _settle_despite(
        self, job: JobRecord, fetched: Fetched, attempt: Attempt, error: BaseException
    ) -> DeathNotice | None:
        """Settling the run raised `error`: file it as a failure, by the retry budget alone."""
        self.logger.error(
            "settling the run raised %s; filed as a failure without asking retry_in",
            user_hooks.summary(error),
            exc_info=error,
            extra={"jid": job.jid, "class": job.class_name, "reason": "settle-error"},
        )
        fallback = attrs.evolve(
            attempt, error=attempt.error or error, decided=failure.decide(job, failure.NO_HOOK)
        )
        return self._settle_failure(job, fetched, fallback)

    def _run(self, job: JobRecord, queue: str) -> Attempt:
        runner = Runner(
            middleware=self.config.server_middleware,
            identity=self.state.identity,
            clock=self.clock,
            job_modules=self.config.job_modules,
        )
        return runner.run(job, queue, lambda error, job_class: self._decide(job, error, job_class))

    def _decide(
        self, job: JobRecord, error: BaseException, job_class: type | None
    ) -> failure.Decided:
        hook = getattr(job_class, "retry_in", None)
        answer: failure.HookAnswer = failure.NO_HOOK
        if hook is not None and failure.hook_is_consulted(job, has_hook=True):
            answer = user_hooks.ask_retry_in(hook, job.retries_made, error, payload.to_dict(job))
        decided = failure.decide(job, answer)
        if decided.note is not None:
            level = logging.ERROR if decided.note.level == "error" else logging.WARNING
            self.logger.log(
                level, decided.note.text, extra={"jid": job.jid, "class": job.class_name}
            )
        return decided

    def _settle_success(self, job: JobRecord, fetched: Fetched, attempt: Attempt) -> None:
        outcome = Outcome(
            kind="ack",
            jid=job.jid,
            class_name=job.class_name,
            history=self._history(job, fetched.queue, attempt, "success"),
            # A job that ran once and well is only in its class's history:
            # a key per job would cost each run more memory and Redis time.
            history_per_job=self._tracks_status(job) or job.retries_made > 0,
            status=self._status(job, "complete"),
            **self._locks(job, "ack", 0.0, self.clock()),
        )
        settlement = Settlement(fetched=fetched, outcome=outcome)
        if self.acker is not None:
            self.acker.submit(settlement)
            return
        try:
            owned = self.store.settle(self._owner, fetched, outcome, self.clock())
        except redis.RedisError as error:
            self.state.pending.remember(settlement)
            self.logger.error(
                "couldn't acknowledge a finished job (%s); will ack it later, it won't run again",
                error,
                extra={"jid": job.jid, "reason": "ack-interrupted"},
            )
            return
        self._settled(fetched, job, owned)

    def _settle_failure(
        self, job: JobRecord, fetched: Fetched, attempt: Attempt
    ) -> DeathNotice | None:
        assert attempt.error is not None
        error = attempt.error
        decision = (attempt.decided or self._decide(job, error, attempt.job_class)).decision
        failed = with_failure(job, user_hooks.error_record(error), failed_at=attempt.ended_at)
        run = FailedRun(job=job, fetched=fetched, attempt=attempt, failed=failed, decision=decision)
        kind, score = self._placement(decision, failed, attempt.ended_at)
        outcome = self._failure_outcome(run, kind, score, failure.attempt_outcome(decision))
        if self.acker is not None and outcome.status:
            self.acker.withdraw_mark(job.jid)  # "working" can't land after this status
        try:
            written = self.store.settle(self._owner, fetched, outcome, self.clock())
        except redis.RedisError as write_error:
            return self._interrupt(run, write_error)
        self._settled(fetched, job, written)
        if not written:
            return None
        self.logger.warning(
            "fail",
            extra={
                **_log_fields(job, fetched.queue, attempt),
                "error": user_hooks.summary(error),
                "reason": failure.attempt_outcome(decision),
            },
        )
        return self._notice(outcome, run) if kind == "dead" else None

    def _placement(
        self, decision: failure.FailureDecision, failed: JobRecord, now: float
    ) -> tuple[OutcomeKind, float]:
        match decision:
            case failure.Retry():
                jitter = self.rng.random() * JITTER_SPAN
                return "retry", now + failure.retry_delay(decision, failed.retries_made, jitter)
            case failure.Dead():
                return "dead", now
            case failure.Discard():
                return "discard", now
            case _:
                assert_never(decision)

    def _failure_outcome(
        self,
        run: FailedRun,
        kind: OutcomeKind,
        score: float,
        attempt_outcome: job_status.AttemptOutcome,
    ) -> Outcome:
        failed, error = run.failed, run.attempt.error
        attempt = records.AttemptRecord(
            attempt=failed.retries_made,
            failed_at=run.attempt.ended_at,
            error_class=failed.error_class or "",
            error_message=failed.error_message or "",
            outcome=attempt_outcome,
        )
        return Outcome(
            kind=kind,
            jid=failed.jid,
            class_name=failed.class_name,
            score=score,
            payload=payload.encode(failed) if kind in ("retry", "dead") else "",
            attempt=records.to_json(attempt),
            history=self._history(run.job, run.fetched.queue, run.attempt, attempt_outcome, error),
            status=self._status(run.job, job_status.failed_status(attempt_outcome)),
            **self._locks(run.job, kind, score, run.attempt.ended_at),
        )

    def _interrupt(self, run: FailedRun, cause: redis.RedisError) -> DeathNotice | None:
        """Recording the failure failed: retry after 30 s times n instead, whatever was decided.

        The job stays on the in-progress list until this write lands, so a
        crash meanwhile makes it an orphan (run again), never a loss.
        """
        job = run.job
        count = (job.interrupted_count or 0) + 1
        plan = failure.interrupt_outcome(job, run.decision, count)
        now = self.clock()
        interrupted = attrs.evolve(run, failed=attrs.evolve(run.failed, interrupted_count=count))
        score = now + plan.delay if plan.target == "retry" else now
        attempt_outcome = (
            "retrying" if plan.target == "retry" else failure.attempt_outcome(run.decision)
        )
        outcome = self._failure_outcome(interrupted, plan.target, score, attempt_outcome)
        extra = {"jid": job.jid, "class": job.class_name, "reason": plan.reason}
        try:
            written = self.store.settle(self._owner, run.fetched, outcome, now)
        except redis.RedisError:
            self.state.pending.remember(Settlement(fetched=run.fetched, outcome=outcome))
            self.logger.error(
                "couldn't record a failure (%s); will file it later", cause, extra=extra
            )
            return None
        self.logger.error("couldn't record a failure (%s) at first; filed", cause, extra=extra)
        self._settled(run.fetched, job, written)
        return self._notice(outcome, run) if written and plan.target == "dead" else None

    def _notice(self, outcome: Outcome, run: FailedRun) -> DeathNotice:
        assert run.attempt.error is not None
        return DeathNotice(
            entry=json.loads(outcome.payload),
            exception=run.attempt.error,
            job_class=run.attempt.job_class,
        )

    def _history(
        self,
        job: JobRecord,
        queue: str,
        attempt: Attempt,
        outcome: str,
        error: BaseException | None = None,
    ) -> str:
        if not self.config.history:
            return ""
        run = records.RunRecord(
            jid=job.jid,
            class_name=job.class_name,
            queue=queue,
            started_at=attempt.started_at,
            ended_at=attempt.ended_at,
            outcome=outcome,
            process=self.state.identity,
            error=None if error is None else user_hooks.summary(error),
        )
        return records.to_json(run)

    def _status(self, job: JobRecord, status: str) -> str:
        return status if self._tracks_status(job) else ""

    def _tracks_status(self, job: JobRecord) -> bool:
        return self.config.track_status or job.extra.get("track_status") is True

    def _mark_working(self, job: JobRecord) -> None:
        if not self._tracks_status(job):
            return
        if self.acker is not None:  # written with the next batch of acks
            self.acker.mark_working(job.jid, self.clock())
            return
        try:
            self.store.set_status(job.jid, "working", self.clock())
        except redis.RedisError as error:
            # Informational only: the run goes ahead, the outcome's write sets the status again.
            self.logger.warning("couldn't mark the job working (%s)", error, extra={"jid": job.jid})

    def _file_unparseable(self, fetched: Fetched, problem: payload.PayloadError) -> None:
        now = self.clock()
        entry = payload.unparseable_entry(fetched.raw, problem, jid=new_jid(), now=now)
        outcome = Outcome(kind="dead", jid="", score=now, payload=entry)
        extra = {"queue": fetched.queue, "error": str(problem), "reason": "unparseable"}
        try:
            self.store.settle(self._owner, fetched, outcome, now)
        except redis.RedisError:
            # Left on the in-progress list: the shutdown requeue parks it, then it's buried.
            self.logger.exception("couldn't file an unparseable payload in dead", extra=extra)
            return
        self.state.release(fetched.raw)
        self.logger.error("an unparseable payload moved to dead", extra=extra)

    def _settled(self, fetched: Fetched, job: JobRecord, written: bool) -> None:
        """The outcome's write came back: the job is no longer this process's to hold."""
        self.state.release(fetched.raw)
        if not written:
            self._lost_ownership(job)

    def _lost_ownership(self, job: JobRecord) -> None:
        report_lost_ownership(self.logger, self.epoch_watch, job.jid, job.class_name)


#: The settlement of a job that holds no lock: nothing to release or extend.
_NO_LOCKS: Mapping[str, Any] = {
    "unique_lock": "",
    "unique_action": "",
    "lock_ttl": 0.0,
    "running_lock": "",
}


def _log_fields(job: JobRecord, queue: str, attempt: Attempt | None = None) -> dict[str, str]:
    """What a job's log lines carry: which job, and once it ran, how long it took."""
    fields = {"jid": job.jid, "class": job.class_name, "queue": queue}
    if attempt is not None:
        fields["duration"] = f"{attempt.ended_at - attempt.started_at:.6f}"
    return fields


def _text(value: object) -> str:
    """A payload field that should be a string, or "" when it isn't."""
    return value if isinstance(value, str) else ""
