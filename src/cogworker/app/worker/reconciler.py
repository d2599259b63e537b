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

from cogworker.adapters.jobs.handover import HandoverStore
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.jobs.run_marks import MarkStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.liveness import presence_ttl
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.config import Config
from cogworker.app.worker.backoff import Backoff, repeat
from cogworker.app.worker.left_jobs import LeftJobs
from cogworker.app.worker.marked_ends import MarkedEnds
from cogworker.app.worker.ownership import report_lost_ownership
from cogworker.app.worker.periodic_watch import EpochWatch
from cogworker.app.worker.state import WorkerState

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
    #: Tells a loss of Redis's data from an orphan recovery when a job is found gone.
    epoch_watch: EpochWatch | None = None
    finished: threading.Event = attrs.field(factory=threading.Event)
    #: Filing what stopped and gone processes left on the queues' lists.
    left: LeftJobs = attrs.field(init=False)
    #: Filing the runs of gone processes that end at their recovery (cancelled, timed out).
    marked: MarkedEnds = attrs.field(init=False)
    _passes: int = 0

    @left.default
    def _left_jobs(self) -> LeftJobs:
        return LeftJobs(
            self.handovers, self.recovers, self.config, self.state, self.logger, self.clock
        )

    @marked.default
    def _marked_ends(self) -> MarkedEnds:
        settles = self.handovers.settles
        return MarkedEnds(settles, MarkStore(settles.client), self.config, self.logger, self.clock)

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
        self.left.file_unsettled()
        if self._may_judge_others():
            self.recover_orphans()
            self.left.bury_repeat_orphans()

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

    def recover_orphans(self) -> int:
        """Requeue the in-progress jobs of every gone process; how many came back.

        Registered processes are looked at on every pass; now and then a key
        scan also finds in-progress lists of unregistered ones (left by a
        process that crashed between its last requeue and its goodbye), and
        lists missing from a process's set of them.  Each is judged first; one
        found gone has its marked runs filed (`marked_ends`), then its jobs
        requeued, a queue's list at a time (each queue then leaves its set),
        then leaves the registry: a crash in between leaves it registered with
        its verdict standing, and the next pass finishes
        (docs/reliability.md).
        """
        total = 0
        identities = set(self.registry.identities())
        self._passes += 1
        found = self.registry.holders() if self._passes % SCAN_EVERY == 1 else {}
        identities |= set(found)
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
            for queue in self.recovers.lists_of(identity, found.get(identity, ())):
                self.marked.file_marked(identity, queue)
            requeued, parked = self.recovers.recover_all(
                identity,
                found.get(identity, ()),
                max_orphanings=self.config.max_orphanings,
                forget=True,
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
        requeued, parked = self.recovers.recover_all(
            self.state.identity,
            self.config.queue_plan.names,
            max_orphanings=self.config.max_orphanings,
            forget=False,
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
        `max_handbacks`, past which it is parked for `LeftJobs.bury_repeat_orphans`.
        """
        return self.recovers.requeue_own(
            self.state.identity,
            self.config.queue_plan.names,
            running=self.state.running_payloads(),
            max_handbacks=self.config.max_handbacks,
        )

    def _settle(self, order: SettleOrder) -> None:
        outcome = order.outcome
        owner = self.state.identity if self.config.fetch == "reliable" else None
        filed = self.handovers.settles.settle(owner, order, self.clock())
        if not filed:
            # Off this process's list: the first write landed, or the job was taken (an
            # orphan recovery, a failover to a replica without its fetch) and runs again,
            # its first run never acknowledged. Said as the acker says it, with its jid.
            report_lost_ownership(
                self.logger, self.epoch_watch, outcome.jid, outcome.class_name, late=True
            )
            return
        self.logger.info("an outcome written late: %s", outcome.kind, extra={"jid": outcome.jid})
        if outcome.kind == "dead":
            self.left.notify_failed(outcome.payload)

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
