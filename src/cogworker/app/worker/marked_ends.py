"""The runs of a gone process that end at its recovery instead of running again: those a
cancel was sent to, and those its pulse ended it for, frozen past their hard time limit.

A cancel's signal goes onto the holder's signal list; a holder killed
before it read it never will.  A pulse that finds its worker frozen in a
run past its hard limit (a C call holding the GIL) kills it.  Either leaves
a mark on the run (`adapters.jobs.run_marks`), and the reconciler that
recovers the gone process files each marked run through the same
settlement as a run's own end, in the one script that takes it off the
gone process's in-progress list (`settle.lua`): a cancelled run as
cancelled, a timed-out one as the failure `JobTimeoutError` ("hard";
`retry_in`, the retry budget and the death hooks apply).  The requeue that
follows finds them gone; a reconciler racing this one writes nothing twice.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import user_hooks
from cogworker.adapters.jobs.fetch import FetchStore
from cogworker.adapters.jobs.outcome import outcome_record
from cogworker.adapters.jobs.run_marks import HardTimeout, MarkStore, RunMarks
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.worker import run_ends
from cogworker.app.worker.running import Attempt, asker, load_class
from cogworker.domain import payload, settlement
from cogworker.domain.job import JobRecord
from cogworker.domain.retries import JITTER_SPAN
from cogworker.exceptions import JobCancelledError, JobTimeoutError


@attrs.define
class MarkedEnds:
    """Files the marked runs of gone processes."""

    settles: SettleStore
    marks: MarkStore
    config: Config
    logger: logging.Logger
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)

    def file_marked(self, identity: str, queue: str) -> int:
        """File the marked runs on gone process `identity`'s in-progress list of `queue`;
        how many this call filed."""
        held = FetchStore(self.settles.client).in_progress(identity, queue)
        jobs = {job.jid: (raw, job) for raw, job in _readable(held)}
        filed = 0
        for jid, marks in self.marks.marks_of(queue, sorted(jobs)).items():
            raw, job = jobs[jid]
            if not marks.cancelled and _later_run(job, marks.hard_timeout):
                self.marks.forget(queue, jid)  # left by a run settled after all: requeued
                continue
            filed += self._file(identity, queue, raw, job, marks)
        return filed

    def _file(self, identity: str, queue: str, raw: bytes, job: JobRecord, marks: RunMarks) -> bool:
        now = self.clock()
        job_class, _ = load_class(job.class_name, self.config.job_modules)
        if marks.cancelled:  # asked for by a person: it wins over a limit
            error: BaseException = JobCancelledError(f"{job.class_name} {job.jid} was cancelled")
            attempt = Attempt(job_class=job_class, started_at=now, ended_at=now, error=error)
            end: settlement.RunEnd = settlement.EndedByCancel(error=user_hooks.error_record(error))
        else:
            assert marks.hard_timeout is not None  # a mark is one or the other
            attempt = _timed_out(job, job_class, marks.hard_timeout, now)
            assert attempt.error is not None
            answer = asker(job)(attempt.error, job_class)
            end = run_ends.end_of(attempt, answer, "hard")
        run = run_ends.run_of(job, queue, attempt, identity)
        jitter = self.rng.random() * JITTER_SPAN
        decided = settlement.settle(run, end, self.config.keeping, now=now, jitter=jitter)
        holder = keys.in_progress(queue, identity)
        if not self.settles.settle_from(holder, raw, queue, True, outcome_record(decided), now):
            return False  # another reconciler filed or requeued it first
        self.marks.forget(queue, job.jid)
        self.logger.warning(
            "a run of gone process %s filed at its recovery: %s",
            identity,
            attempt.error,
            extra={"jid": job.jid, "class": job.class_name, "reason": "marked-run"},
        )
        if isinstance(decided, settlement.ToDead) and attempt.error is not None:
            entry = payload.to_dict(decided.job)
            notice = DeathNotice(entry=entry, exception=attempt.error, job_class=job_class)
            notify(notice, self.config.death_handlers, self.logger)
        return True


def _later_run(job: JobRecord, mark: HardTimeout | None) -> bool:
    """Whether `job`, as held, is a run that failed after the run `mark` was written for
    started: that run was settled after all (its pulse judged it frozen as its watchdog
    filed it), and this later one is a plain orphan."""
    last_failed = job.retried_at if job.retried_at is not None else job.failed_at
    return mark is not None and last_failed is not None and last_failed >= mark.started_at


def _timed_out(job: JobRecord, job_class: type | None, mark: HardTimeout, now: float) -> Attempt:
    """The run its pulse ended past its hard limit, as it is filed."""
    error = JobTimeoutError(
        f"{job.class_name} {job.jid} was still running {mark.grace}s after its time limit "
        f"({mark.timeout}s), holding its process (C code that keeps the GIL): the process "
        "was ended by its pulse"
    )
    started = min(mark.started_at, now)
    return Attempt(job_class=job_class, started_at=started, ended_at=now, error=error)


def _readable(held: list[bytes]) -> list[tuple[bytes, JobRecord]]:
    """The entries of `held` that decode as jobs, with their records (the others are
    parked by the requeue, as before)."""
    decoded = [(raw, payload.decode(raw)) for raw in held]
    return [(raw, job.unwrap()) for raw, job in decoded if is_successful(job)]
