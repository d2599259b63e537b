"""The reconciler: writes that failed are retried, and dead processes' jobs come back.

A process is judged gone in two looks a threshold apart, on its own node's
clock (`ProcessRegistry.judge_gone`): its heartbeat older than
`orphan_threshold` makes it suspect, and still no beat a threshold later is
the verdict; then its jobs are requeued and, last, it is unregistered.
This process judges others only once it has itself been talking to Redis
for a whole threshold.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import attrs
import redis
from returns.pipeline import is_successful

from cogworker.adapters import user_hooks
from cogworker.adapters.jobs.handover import HandoverStore, parse_handover_record
from cogworker.adapters.jobs.left_lists import LeftList
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.jobs.settle import SettleOrder
from cogworker.adapters.liveness import presence_ttl
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.job_loading import load_job_class
from cogworker.app.job_record import new_jid
from cogworker.app.worker.backoff import Backoff, repeat
from cogworker.app.worker.state import WorkerState
from cogworker.domain import locks, payload, results
from cogworker.domain.job import JobRecord
from cogworker.exceptions import (
    JobFailedError,
    JobHandedBackError,
    JobOrphanedError,
    UnknownJobClassError,
)

#: Every this many passes, also scan for in-progress lists of unregistered processes.
SCAN_EVERY = 20


@attrs.define
class Reconciler:
    """Settles this process's pending writes and recovers other processes' orphans."""

    handovers: HandoverStore
    recovers: RecoverStore
    runs: RunStore
    registry: ProcessRegistry
    config: Config
    state: WorkerState
    logger: logging.Logger
    clock: Callable[[], float] = time.time
    finished: threading.Event = attrs.field(factory=threading.Event)
    _passes: int = 0

    @property
    def interval(self) -> float:
        """Seconds between passes: a fraction of the threshold, so recovery is prompt."""
        return min(max(self.config.orphan_threshold / 4, 0.2), 15.0)

    def run(self) -> None:
        """The thread's loop (it runs until the manager's very end, to settle what it can)."""
        repeat(
            self._reconcile_step,
            what="reconcile",
            logger=self.logger,
            until=self.finished,
            first_delay=self.interval,
            maximum=self.interval,
        )

    def _reconcile_step(self) -> float:
        self.reconcile()
        return self.interval

    def reconcile(self) -> None:
        """One pass: pending writes, handed-over ones, then (when safe to judge) orphans."""
        self.settle_pending()
        self.release_deferred()
        self.file_unsettled()
        if self._may_judge_others():
            self.recover_orphans()
            self.bury_repeat_orphans()

    def settle_pending(self) -> None:
        """Write the acks and failure outcomes that failed earlier; stop at the first error."""
        for order in self.state.pending.snapshot():
            self._settle(order)
            self.state.pending.forget(order)
            self.state.release(order.fetched.raw)

    def release_deferred(self) -> None:
        """Let go of the locks whose release failed while Redis was away (owner-checked)."""
        for lock, jid in self.state.deferred_releases():
            self.runs.release_lock(lock, jid)
            self.state.released(lock, jid)

    def hand_over_pending(self) -> None:
        """At shutdown: give every unwritten settlement to whichever reconciler comes next.

        Each moves off the in-progress list in the same step, so the final
        requeue can't run a finished job again.
        """
        for order in self.state.pending.snapshot():
            self.handovers.hand_over(self.state.identity, order.fetched, order.outcome)
            self.state.pending.forget(order)

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
            self._notify_failed(outcome.payload)
        return True

    def recover_orphans(self) -> int:
        """Requeue the in-progress jobs of every gone process; how many came back.

        Registered processes are looked at on every pass; now and then a key
        scan also finds in-progress lists of unregistered ones (left by a
        process that crashed between its last requeue and its goodbye).  Each
        is judged first; one found gone has its jobs requeued, then leaves the
        registry: a crash in between leaves it registered with its verdict
        standing, and the next pass finishes (docs/reliability.md).
        """
        total = 0
        identities = set(self.registry.identities())
        self._passes += 1
        if self._passes % SCAN_EVERY == 1:
            identities |= self.registry.holders()
        threshold = self.config.orphan_threshold
        for identity in sorted(identities - {self.state.identity}):
            verdict = self.registry.judge_gone(identity, threshold, presence_ttl(threshold))
            if verdict not in ("gone", "gone already"):
                continue
            # Each said once, by whoever did it: the verdict is given once, each job
            # requeued once, whichever reconcilers race.
            if verdict == "gone":
                self.logger.warning(
                    "process %s is gone: no beat for a threshold since it was found late",
                    identity,
                    extra={"reason": "process-gone"},
                )
            requeued, parked = self.recovers.recover(
                identity, max_orphanings=self.config.max_orphanings
            )
            self.registry.unregister(identity)
            total += requeued
            if requeued or parked:
                self.logger.warning(
                    "%d jobs of gone process %s requeued, %d orphaned too often",
                    requeued,
                    identity,
                    parked,
                    extra={"reason": "orphans-recovered"},
                )
        return total

    def recover_own(self) -> None:
        """This process was declared gone (a beat found its heartbeat hash deleted): it
        lets go of every job it held, as a settlement finding its job gone does, and
        requeues what its list still holds, as the recovery would (whose reconciler may
        have stopped after its verdict), before it fetches again.  Only with reliable
        fetch: a basic fetch's jobs are on no list, and no one else runs them."""
        if self.config.fetch != "reliable":
            return
        held = self.state.let_go_of_all()
        requeued, parked = self.recovers.recover(
            self.state.identity, max_orphanings=self.config.max_orphanings
        )
        self.logger.warning(
            "this process was declared gone (silent past orphan_threshold): the %d jobs it "
            "held are no longer its own; %d still on its list requeued, %d orphaned too often",
            held,
            requeued,
            parked,
            extra={"reason": "declared-gone"},
        )

    def hand_back_unfinished(self) -> int:
        """At shutdown: this process's unfinished jobs back on their queues; how many.

        Those still running are handed back unfinished: each counts toward
        `max_handbacks`, past which it is parked for `bury_repeat_orphans`.
        """
        return self.recovers.requeue_own(
            self.state.identity,
            running=self.state.running_payloads(),
            max_handbacks=self.config.max_handbacks,
        )

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

    def _settle(self, order: SettleOrder) -> None:
        outcome = order.outcome
        owner = self.state.identity if self.config.fetch == "reliable" else None
        filed = self.handovers.settles.settle(owner, order, self.clock())
        self.logger.info("an outcome written late: %s", outcome.kind, extra={"jid": outcome.jid})
        if filed and outcome.kind == "dead":
            self._notify_failed(outcome.payload)

    def _notify_failed(self, filed: str) -> None:
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

    def write_last(self, unfinished: int) -> None:
        """At shutdown, once every other thread is done: late outcomes, hand-overs, this
        process's unfinished jobs back on their queues, and its presence gone; tried for a
        while if Redis is away (then another process recovers them as orphans)."""
        backoff = Backoff("final writes", self.logger)
        for _ in range(10):
            try:
                self.release_deferred()
                if self.config.fetch == "reliable":
                    self._settle_pending_now()
                    self.hand_over_pending()
                    requeued = self.hand_back_unfinished()
                    self.logger.info(
                        "%d jobs back on their queues (%d still running)",
                        requeued,
                        unfinished,
                    )
                else:
                    self.settle_pending()
                self.registry.remove(self.state.identity)
                return
            except redis.RedisError as error:
                time.sleep(backoff.failed(error))
        self.logger.error(
            "Redis stayed away at shutdown: this process's unfinished jobs will be "
            "recovered as orphans by another process"
        )

    def _settle_pending_now(self) -> None:
        """Write the outcomes that failed earlier while this process can: handed over
        instead, they would wait for another process to file them."""
        try:
            self.settle_pending()
        except redis.RedisError as error:
            self.logger.warning(
                "couldn't write late outcomes at shutdown (%s); handing over", error
            )

    def _may_judge_others(self) -> bool:
        since = self.state.healthy_since
        return since is not None and time.time() - since >= self.config.orphan_threshold


def _with_error(job: JobRecord, error: Exception, now: float) -> JobRecord:
    record = user_hooks.error_record(error)
    return attrs.evolve(
        job, error_class=record.class_name, error_message=record.message, failed_at=now
    )
