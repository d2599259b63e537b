"""Jobs left on the queues' lists for whichever reconciler comes next: the outcomes
stopping processes handed over, to file, and the repeat orphans and hand-backs recovery
parked, to bury in dead; each filed in its queue's slot, death hooks told.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import user_hooks
from cogworker.adapters.jobs.handover import HandoverStore, parse_handover_record
from cogworker.adapters.jobs.left_lists import LeftList
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.job_loading import load_job_class
from cogworker.app.job_record import new_jid
from cogworker.app.worker.state import WorkerState
from cogworker.domain import locks, payload, results
from cogworker.domain.job import JobRecord
from cogworker.exceptions import (
    JobFailedError,
    JobHandedBackError,
    JobOrphanedError,
    UnknownJobClassError,
)


@attrs.define
class LeftJobs:
    """Files hand-overs and buries parked jobs, of every queue's lists."""

    handovers: HandoverStore
    recovers: RecoverStore
    config: Config
    state: WorkerState
    logger: logging.Logger
    clock: Callable[[], float] = time.time

    def file_unsettled(self) -> int:
        """Write what stopped processes handed over, on every queue's unsettled list; how
        many this call wrote."""
        written = 0
        for unsettled in self.handovers.unsettled():
            for record in unsettled.entries:
                written += self._file_handed_over(unsettled, record)
        return written

    def _file_handed_over(self, unsettled: LeftList, record: bytes) -> bool:
        now = self.clock()
        outcome = parse_handover_record(record)
        if outcome is None:
            error = payload.PayloadError(
                problem=payload.PayloadProblem.BAD_FIELD, detail="a damaged unsettled record"
            )
            self.recovers.bury_unreadable(
                unsettled.holder, record, error, jid=new_jid(), now=now, queue=unsettled.queue
            )
            return False
        if not self.handovers.settle_handed_over(unsettled.key, record, outcome, now):
            return False
        if outcome.kind == "dead":
            self.notify_failed(outcome.payload)
        return True

    def bury_repeat_orphans(self) -> int:
        """File parked repeat orphans (JobOrphanedError) and repeat hand-backs
        (JobHandedBackError) in dead; how many this call did."""
        orphaned = JobOrphanedError(f"orphaned more than {self.config.max_orphanings} times")
        handed_back = JobHandedBackError(
            f"still running at more than {self.config.max_handbacks} worker stops"
        )
        return self._bury_parked("repeat_orphans", orphaned) + self._bury_parked(
            "repeat_handbacks", handed_back
        )

    def _bury_parked(self, name: str, error: Exception) -> int:
        """File the entries of every queue's parking list `name` in that queue's dead set."""
        return sum(
            self._bury_one(parked, entry, error)
            for parked in self.recovers.parked(name)
            for entry in parked.entries
        )

    def _bury_one(self, parked: LeftList, entry: bytes, error: Exception) -> bool:
        now = self.clock()
        decoded = payload.decode(entry)
        if not is_successful(decoded):
            return self.recovers.bury_unreadable(
                parked.holder, entry, decoded.failure(), jid=new_jid(), now=now, queue=parked.queue
            )
        job = _with_error(decoded.unwrap(), error, now)
        filed, kept = payload.encode(job), results.buried(job)
        if not self.recovers.bury(
            *parked.holder, entry, filed, now, jid=job.jid, result=kept, queue=parked.queue
        ):
            return False
        self.logger.error("moved to dead: %s", error, extra={"jid": job.jid})
        self._release_locks(job)
        # The hooks get the entry as stored in dead, error and all.
        notify(self._notice(job, error), self.config.death_handlers, self.logger)
        return True

    def _release_locks(self, job: JobRecord) -> None:
        """A job that ended outside a settlement lets go of its locks (owner-checked)."""
        for lock in locks.locks_released_for_good(job):
            self.state.defer_release(lock, job.jid)  # done by the next pass

    def notify_failed(self, filed: str) -> None:
        """Death hooks for a failure filed from its stored record (a JobFailedError)."""
        decoded = payload.decode(filed)
        if is_successful(decoded):
            job = decoded.unwrap()
            error = JobFailedError(job.error_message or "")
            notify(self._notice(job, error), self.config.death_handlers, self.logger)

    def _notice(self, job: JobRecord, error: Exception) -> DeathNotice:
        try:
            job_class: type | None = load_job_class(job.class_name, self.config.job_modules)
        except UnknownJobClassError:
            job_class = None
        return DeathNotice(entry=payload.to_dict(job), exception=error, job_class=job_class)


def _with_error(job: JobRecord, error: Exception, now: float) -> JobRecord:
    record = user_hooks.error_record(error)
    return attrs.evolve(
        job, error_class=record.class_name, error_message=record.message, failed_at=now
    )
