"""The watchdog: the time limits of one worker process's running jobs, applied.

At most every WATCH_INTERVAL (sooner when a deadline falls earlier) it
looks at what runs, asks `domain.deadlines` which runs are overdue, and

* soft, at a run's limit: raises `JobTimeoutError` into it through
  `Interrupts` (a sync job's thread gets it as an asynchronous exception,
  an async job's task is cancelled); the run's own end files it as an
  ordinary failure (`run_ends`);
* hard, for a run still going `Config.timeout_grace` seconds later (a sync
  job blocked in C code, which the exception can't reach): it claims the
  run's outcome (`WorkerState.claim_settlement`, so the run, should it end
  after all, writes nothing), files `JobTimeoutError` for it through the
  same settlement as any run's end (`retry_in`, the retry budget and the
  death hooks apply), then stops the process: fetching stops, its other
  jobs get `shutdown_timeout`, and it exits with `HARD_TIMEOUT_EXIT` so
  that `--processes` (or the service manager) starts a fresh one: nothing
  else frees a thread stuck in C.  A write that fails (Redis away) is
  handed over at the stop like any other; a process killed before writing
  leaves the job on its in-progress list, for orphan recovery.

A job holding the GIL (C code that doesn't release it) freezes this thread
with the rest of the process: the pulse, a process of its own, ends such a
process and marks the run for its recovery (`pulse`, `marked_ends`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import attrs
from returns.pipeline import is_successful

from cogworker.adapters.jobs.fetch import Fetched
from cogworker.app.death import notify
from cogworker.app.worker.processor import Processor
from cogworker.app.worker.running import Attempt, asker, load_class
from cogworker.app.worker.state import RunningJob
from cogworker.domain import deadlines, payload
from cogworker.exceptions import JobTimeoutError

#: The longest the watchdog waits between two looks: a job that starts is seen within it.
WATCH_INTERVAL = 0.5
#: The shortest wait, so a deadline just past doesn't spin the loop.
MIN_WAIT = 0.01


@attrs.define
class Watchdog:
    """Applies the time limits of the jobs `processor` runs, until `finished` is set."""

    processor: Processor
    logger: logging.Logger
    #: Asks the process to stop, after a hard timeout (with the jid).
    on_hard_timeout: Callable[[str], None]
    #: The clock the runs' start times are on (the processor's).
    clock: Callable[[], float] = time.time
    finished: threading.Event = attrs.field(factory=threading.Event)
    #: The runs (jid: their start) that had `JobTimeoutError` raised into them, and when.
    _told: dict[str, tuple[float, float]] = attrs.field(factory=dict)

    def run(self) -> None:
        """The thread's loop."""
        while not self.finished.wait(self._wait()):
            try:
                self.check()
            except Exception:
                # Its own bug (user code is called through user_hooks): logged, tried again.
                self.logger.exception("the time-limit watchdog failed; it goes on")

    def check(self) -> None:
        """One look: interrupt the runs at their limit, file those past their grace."""
        running = self._limited()
        now = self.clock()
        found = deadlines.overdue(
            (run for run, _ in running.values()),
            self._told_at(running),
            grace=self.processor.config.timeout_grace,
            now=now,
        )
        for run in found.soft:
            self._interrupt(run, now)
        for run in found.hard:
            self._file(run, running[run.jid][1])

    def _limited(self) -> dict[str, tuple[deadlines.LimitedRun, RunningJob]]:
        """The running jobs that have a limit, by jid."""
        return {
            work.jid: (
                deadlines.LimitedRun(
                    runner=runner, jid=work.jid, started_at=work.run_at, timeout=work.timeout
                ),
                work,
            )
            for runner, work in self.processor.state.running_jobs().items()
            if work.timeout is not None
        }

    def _told_at(
        self, running: dict[str, tuple[deadlines.LimitedRun, RunningJob]]
    ) -> dict[str, float]:
        """When each of the `running` runs was told, by jid; forgets the runs that ended
        (a later run of the same job is a new run, told afresh)."""
        self._told = {
            jid: (started, at)
            for jid, (started, at) in self._told.items()
            if jid in running and running[jid][0].started_at == started
        }
        return {jid: at for jid, (_, at) in self._told.items()}

    def _wait(self) -> float:
        limited = self._limited()
        running = (run for run, _ in limited.values())
        grace = self.processor.config.timeout_grace
        due = deadlines.next_deadline(running, self._told_at(limited), grace=grace)
        if due is None:
            return WATCH_INTERVAL
        return min(WATCH_INTERVAL, max(MIN_WAIT, due - self.clock()))

    def _interrupt(self, run: deadlines.LimitedRun, now: float) -> None:
        if not self.processor.state.interrupt_running(run.runner, run.jid, JobTimeoutError):
            return  # it has just ended
        self._told[run.jid] = (run.started_at, now)
        self.logger.warning(
            "past its time limit (%ss): JobTimeoutError raised into it",
            run.timeout,
            extra={"jid": run.jid, "reason": "timeout"},
        )

    def _file(self, run: deadlines.LimitedRun, work: RunningJob) -> None:
        """File a run that ignored its timeout as failed (hard), then stop the process."""
        processor = self.processor
        if not processor.state.claim_settlement(run.runner, run.jid, abandon=True):
            return  # it has just ended, and writes its own outcome
        decoded = payload.decode(work.payload)
        assert is_successful(decoded)  # it was decoded to be run
        job = decoded.unwrap()
        grace = processor.config.timeout_grace
        self.logger.error(
            "still running %ss after its time limit (%ss): filed as failed; this process "
            "stops, to be replaced",
            grace,
            run.timeout,
            extra={"jid": job.jid, "class": job.class_name, "reason": "hard-timeout"},
        )
        job_class, _ = load_class(job.class_name, processor.config.job_modules)
        error = JobTimeoutError(
            f"{job.class_name} {job.jid} was still running {grace}s after its time limit "
            f"({run.timeout}s), out of reach of the JobTimeoutError raised into it"
        )
        attempt = Attempt(
            job_class=job_class, started_at=work.run_at, ended_at=self.clock(), error=error
        )
        fetched = Fetched(queue=work.queue, raw=work.payload)
        try:
            notice = processor.settle_attempt(job, fetched, attempt, asker(job), "hard")
        finally:
            self.on_hard_timeout(job.jid)  # the thread is lost to this process whatever happens
        if notice is not None:
            notify(notice, processor.config.death_handlers, self.logger)
