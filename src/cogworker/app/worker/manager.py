"""The manager: one worker process's threads, start to clean exit.

Stop (SIGTERM, SIGINT, SIGHUP, or "stop" from the dashboard): fetching
stops, running jobs get `shutdown_timeout` seconds to finish (a second stop
request cuts that short), then every job still on this process's
in-progress list goes back to the front of its queue and the process's
presence keys are removed.  Quiet (SIGTSTP, or "quiet"): fetching pauses
until "resume".  A thread that dies stops the process the same way, and it
exits non-zero (see `stopping`).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable

from cogworker.adapters.batch_store import BatchStore
from cogworker.adapters.connection import BLOCK_SECONDS, connect, dedicated
from cogworker.adapters.jobs.due import DueStore
from cogworker.adapters.jobs.fetch import FetchStore
from cogworker.adapters.jobs.handover import HandoverStore
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.limit_store import LimitStore
from cogworker.adapters.periodic_store import PeriodicStore
from cogworker.adapters.process_registry import ProcessRegistry, cancelled_jid
from cogworker.adapters.redis_client import SOCKET_TIMEOUT, RedisClient
from cogworker.adapters.redis_clock import RedisClock
from cogworker.adapters.redis_target import RedisTarget
from cogworker.adapters.replication import ShortfallLog
from cogworker.app.config import Config
from cogworker.app.worker import admission, pulse
from cogworker.app.worker.acker import Acker
from cogworker.app.worker.batch_mover import BatchMover
from cogworker.app.worker.event_loop import event_loop_for
from cogworker.app.worker.fetcher import Fetcher
from cogworker.app.worker.handoff import HandOff
from cogworker.app.worker.heartbeat import Heartbeat
from cogworker.app.worker.lease import Lease
from cogworker.app.worker.limit_gate import LimitGate
from cogworker.app.worker.periodic_manager import PeriodicManager
from cogworker.app.worker.periodic_watch import EpochWatch
from cogworker.app.worker.poller import Poller
from cogworker.app.worker.processor import Processor
from cogworker.app.worker.reconciler import Reconciler
from cogworker.app.worker.run_start import RunStart
from cogworker.app.worker.settler import Settler
from cogworker.app.worker.slots import FetchSlots
from cogworker.app.worker.state import WorkerState
from cogworker.app.worker.stopping import StopControl
from cogworker.app.worker.watchdog import Watchdog
from cogworker.app.worker.work_queue import WorkQueue
from cogworker.exceptions import JobCancelledError

#: A blocking fetch returns within BLOCK_SECONDS, any other call within the socket timeout.
FETCHER_STOP_TIMEOUT = BLOCK_SECONDS + SOCKET_TIMEOUT + 1.0


def new_identity() -> str:
    """`host:pid:random`: unique even when a pid is reused."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Manager:
    """Runs one worker process: `run()` blocks until the process has stopped cleanly."""

    def __init__(
        self,
        config: Config,
        *,
        logger: logging.Logger | None = None,
        quiet: bool = False,
        target: RedisTarget | None = None,
    ) -> None:
        """`quiet`: start quiet, taking no job until resumed (as after SIGTSTP).
        `target`: the Redis, named by the setting it came from (default: the config's)."""
        self.config = config
        self.logger = logger or logging.getLogger("cogworker")
        self.target = target or config.redis_target()
        self.redis = connect(self.target, max_connections=config.concurrency + 8)
        # Reliable fetch's jobs may be recovered: it fetches and starts them under a lease.
        lease = Lease(config.orphan_threshold) if config.fetch == "reliable" else Lease()
        self.state = WorkerState(identity=new_identity(), lease=lease)
        if quiet:
            self.state.quiet.set()
        retention = config.retention
        self._shortfalls = ShortfallLog(self.logger)
        self.batch_mover = BatchMover(
            BatchStore(self.redis), config.queue_plan.names, self.state.stopping, self.logger
        )
        self.settles = self._settle_store(self.redis)
        self.recovers = RecoverStore(self.redis, retention)
        self.runs = RunStore(self.redis, status_ttl=retention.status_ttl)
        self.registry = ProcessRegistry(self.redis)
        self._stop = StopControl(self.logger, self.state.identity, self.state.stopping)
        self._stop_requested = self._stop.requested
        # Due times (retries, scheduled jobs, cron ticks) on Redis's clock, not this host's.
        self.clock = RedisClock(self.redis)
        # Made in start(): its connection is opened at once, so only once Redis answered.
        self.acker: Acker | None = None
        self.watchdog: Watchdog | None = None
        self._slots = FetchSlots(config.concurrency, config.prefetch)
        self._work = WorkQueue(self._slots, self.state.stopping, self.logger, self.identity)
        self._threads: list[threading.Thread] = []
        self.event_loop = event_loop_for(config, self.state, self.logger)
        self.limit_gate = LimitGate(
            LimitStore(self.redis), self.runs, config, self.state, self.logger, self.clock
        )
        self.heartbeat = Heartbeat(
            self.registry, config, self.state, self.logger, self.signal, gate=self.limit_gate
        )
        periodic_store = PeriodicStore(self.redis)
        self.epoch_watch = EpochWatch(periodic_store, config, self.logger, self.clock)
        self.reconciler = Reconciler(
            HandoverStore(self.settles),
            self.recovers,
            self.runs,
            self.registry,
            config,
            self.state,
            self.logger,
            epoch_watch=self.epoch_watch,
        )
        self.heartbeat.on_declared_gone = self.reconciler.recover_own
        self.periodic = PeriodicManager(
            periodic_store,
            config,
            self.state.stopping,
            self.logger,
            clock=self.clock,
            watch=self.epoch_watch,
        )

    def _settle_store(self, client: RedisClient) -> SettleStore:
        """Outcome writes through `client`, waiting for the replicas the target asks for
        (its shortfalls told once for the process, whichever thread met them)."""
        replication = self.target.replication
        return SettleStore(
            client,
            self.config.retention,
            replication,
            self._shortfalls,
            on_batch_event=self.batch_mover.wake,
        )

    @property
    def identity(self) -> str:
        """This process's identity in Redis and on the dashboard."""
        return self.state.identity

    def run(self) -> None:
        """Start, serve until asked to stop, then stop cleanly.

        Raises SystemExit(THREAD_DIED_EXIT), once stopped, if a thread died, and
        SystemExit(HARD_TIMEOUT_EXIT) if a job stuck past its time limit stopped it.
        """
        # Started first: it beats for this process from its registration on.
        companion = pulse.start(self.config, self.target, self.identity, self.logger)
        if companion is not None:
            grace = self.config.timeout_grace
            self.state.run_watcher = pulse.RunWatch(companion, grace, self.clock)
        try:
            self._stop.install(lambda: self.signal("stop"), lambda: self.signal("quiet"))
            if not self._register():
                return
            self.start()
            while not self._stop_requested.wait(1.0):
                pass  # a timed wait, so signal handlers get to run promptly
            self.stop()
        finally:
            if companion is not None:
                companion.stop()
        status = self._stop.exit_status()
        if status is not None:
            raise SystemExit(status)

    def signal(self, name: str) -> None:
        """Act on "quiet", "resume", "stop" (from a signal or the dashboard) or a cancel."""
        jid = cancelled_jid(name)
        if jid is not None:
            if self.state.has_job(jid):  # else it has ended: its outcome stands
                self.state.interrupts.interrupt(jid, JobCancelledError)
            return
        if name == "quiet":
            self.state.quiet.set()
        elif name == "resume":
            self.state.quiet.clear()
        elif name == "stop":
            self._stop.request()

    def start(self) -> None:
        """Start every thread (after the process is registered)."""
        plan = self.config.queue_plan
        admission.report_wrong_keys(self.redis, self.registry, self.logger)
        self.periodic.prepare()
        reliable = self.config.fetch == "reliable"
        owner = self.identity if reliable else None
        self.acker = Acker(
            self._settle_store(dedicated(self.target, fallback=self.redis)),
            self.state,
            self.logger,
            owner,
            epoch_watch=self.epoch_watch,
        )
        processor = self._processor(owner, self.acker)
        self.watchdog = Watchdog(processor, self.logger, self._stop.hard_timeout, self.clock)
        hand_off = HandOff(
            self._work.jobs, self.event_loop, processor.on_loop, self.config.job_modules, self.clock
        )
        fetcher = Fetcher(
            FetchStore(dedicated(self.target, fallback=self.redis)),
            self.config,
            self.state,
            self.logger,
            hand_off,
            self._slots,
            plan,
            self.limit_gate.fetch_terms,
        )
        poller = Poller(
            DueStore(self.redis),
            self.recovers,
            self.config.poll_interval,
            self.state.stopping,
            self.logger,
            clock=self.clock,
        )
        if self.event_loop is not None:
            # A job waiting there for a place holds its fetch slot until it starts.
            self.event_loop.start(self._spawn, self._slots.finished)
        for index in range(self.config.concurrency):
            self._spawn(f"processor-{index}", lambda: self._work.serve(processor))
        self._spawn("fetcher", fetcher.run)
        self._spawn("acker", self.acker.run)
        self._spawn("heartbeat", self.heartbeat.run)
        self._spawn("watchdog", self.watchdog.run)
        self._spawn("poller", poller.run)
        self._spawn("batch-mover", self.batch_mover.run)
        self._spawn("reconciler", self.reconciler.run)
        self._spawn("periodic", self.periodic.run)
        self.logger.info(
            "worker started: %s, %d threads, %d async, queues %s, %s fetch, Redis %s",
            self.identity,
            self.config.concurrency,
            self.config.async_concurrency,
            ",".join(plan.names),
            self.config.fetch,
            self.target.label,
            extra={"identity": self.identity},
        )

    def _processor(self, owner: str | None, acker: Acker) -> Processor:
        settler = Settler(
            self.settles,
            self.recovers,
            self.state,
            self.logger,
            owner,
            acker=acker,
            epoch_watch=self.epoch_watch,
            clock=self.clock,
        )
        starts = RunStart(
            self.runs, self.config, self.state, self.logger, acker, self.clock, self.limit_gate
        )
        return Processor(
            starts,
            settler,
            self.config,
            self.state,
            self.logger,
            clock=self.clock,
        )

    def stop(self) -> None:
        """Drain running jobs for up to `shutdown_timeout`, requeue the rest, leave Redis clean."""
        self.logger.info("stopping: running jobs get %.1fs", self.config.shutdown_timeout)
        self.state.stopping.set()
        # The fetcher first: a fetch still waiting in Redis could otherwise take
        # a job after the final requeue, onto a list nobody would look at.
        for thread in self._threads:
            if thread.name == "fetcher":
                thread.join(FETCHER_STOP_TIMEOUT)
        processors = [t for t in self._threads if t.name.startswith("processor-")]
        self._work.release(len(processors))
        unfinished = self._stop.drain(
            processors, self.config.shutdown_timeout, self._running_on_loop, self.state.abandoned
        )
        loop = self.event_loop
        if loop is not None:
            # Cancelled, not settled: they stay in progress and go back to their queues.
            loop.cancel_all()
            loop.stop()
        # Every ack handed over is written (or remembered) before the final
        # requeue, which would otherwise run a finished job again.
        if self.acker is not None:
            self.acker.stop()
        for thread in self._threads:
            if thread.name == "acker":
                thread.join(FETCHER_STOP_TIMEOUT)
        # Housekeeping ends before the final writes: a beat after them would
        # register this process again, a reconcile pass race the hand-over.
        self._end_housekeeping()
        self.reconciler.write_last(unfinished)
        self.limit_gate.let_go_all()
        self.logger.info("stopped", extra={"identity": self.identity})

    def _end_housekeeping(self) -> None:
        """End the housekeeping threads (the watchdog's hard-timeout filing included)."""
        self.heartbeat.finished.set()
        self.reconciler.finished.set()
        if self.watchdog is not None:
            self.watchdog.finished.set()
        for thread in self._threads:
            if thread.name in ("heartbeat", "reconciler", "poller", "periodic", "watchdog"):
                thread.join(FETCHER_STOP_TIMEOUT)

    def _running_on_loop(self) -> int:
        """How many async jobs run on the loop, but those timed out and filed for them."""
        if self.event_loop is None:
            return 0
        abandoned = sum(runner.startswith("loop:") for runner in self.state.abandoned())
        return self.event_loop.running() - abandoned

    def _register(self) -> bool:
        """Register, waiting out a Redis that is away (see `admission.register`)."""
        return admission.register(
            self.redis, self.heartbeat.beat, self.target, self.logger, self._stop_requested
        )

    def _spawn(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=self._stop.watched(name, target), name=name, daemon=True)
        thread.start()
        self._threads.append(thread)
