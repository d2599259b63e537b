"""The heartbeat: this process's presence in Redis, and its mailbox for quiet/resume/stop.

It runs on its own thread with nothing else to do, so busy job threads
don't starve it, and it keeps beating through the shutdown drain: a
process that is finishing its jobs is alive, not an orphan.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable

import attrs

from cogworker.adapters import process_memory
from cogworker.adapters.liveness import presence_ttl
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.config import Config
from cogworker.app.version import VERSION
from cogworker.app.worker.backoff import repeat
from cogworker.app.worker.limit_gate import LimitGate
from cogworker.app.worker.state import WorkerState


@attrs.define
class Heartbeat:
    """Beats every `heartbeat_interval` until `finished` is set."""

    registry: ProcessRegistry
    config: Config
    state: WorkerState
    logger: logging.Logger
    on_signal: Callable[[str], None]
    finished: threading.Event = attrs.field(factory=threading.Event)
    #: Renews the per-key limit places of the running jobs with each beat.
    gate: LimitGate | None = None
    #: What a process declared gone does before it fetches again (reliable fetch:
    #: `Reconciler.recover_own`); raising, it is called again at the next beat.
    on_declared_gone: Callable[[], None] = lambda: None
    #: Whether a beat has landed: a later one finding its presence taken was declared gone.
    _registered: bool = False
    _declared_gone: bool = False
    #: The running jobs couldn't be described at the latest beat (said once per streak).
    _work_unreadable: bool = False

    @property
    def ttl(self) -> int:
        """Seconds the presence keys outlive the last beat (well past the orphan threshold)."""
        return presence_ttl(self.config.orphan_threshold)

    def beat(self) -> None:
        """One beat: write presence and register the queues served (the first beat is the
        process's registration), renew the lease, then act on the signals that were waiting.

        A beat finding this process's presence taken by a recovery's verdict (see
        `BeatReply.presence_taken`) lets go of every job first: the lease is
        renewed only once that is done.
        """
        sent_at = self.state.lease.clock()
        reply = self.registry.beat(
            self.state.identity,
            self._fields(),
            self._running(),
            self.ttl,
            time.time(),
            held_locks=self.state.held_locks(),
            lock_ttl=self.config.periodic_lock_ttl,
            queues=self.config.queue_plan.names,
            fetched_from=self.config.queue_plan.names if self.config.fetch == "reliable" else (),
        )
        self._declared_gone = self._declared_gone or (self._registered and reply.presence_taken)
        self._registered = True
        if self._declared_gone:
            self.on_declared_gone()
            self._declared_gone = False
        self.state.lease.renew(sent_at)
        if self.gate is not None:
            self.gate.renew()
        if self.state.healthy_since is None:
            self.state.healthy_since = time.time()
        for signal in reply.signals:
            self.logger.info("signal received: %s", signal, extra={"reason": "remote-signal"})
            self.on_signal(signal)

    def run(self) -> None:
        """The thread's loop."""
        repeat(
            self._beat_step,
            what="heartbeat",
            logger=self.logger,
            until=self.finished,
            first_delay=self.config.heartbeat_interval,
            maximum=self.config.heartbeat_interval,
            on_failure=self._unhealthy,
        )

    def _beat_step(self) -> float:
        self.beat()
        return self.config.heartbeat_interval

    def _running(self) -> dict[str, str]:
        """What the threads run; nothing, if a job's description can't be made (its
        arguments, say, nested deeper than this thread may recurse): the beat matters more."""
        try:
            running = self.state.running()
        except Exception:
            if not self._work_unreadable:
                self.logger.exception("couldn't describe the running jobs for the heartbeat")
            self._work_unreadable = True
            return {}
        self._work_unreadable = False
        return running

    def _unhealthy(self) -> None:
        self.state.healthy_since = None

    def _fields(self) -> dict[str, str | int | float]:
        fields: dict[str, str | int | float] = {
            "identity": self.state.identity,
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": self.state.started_at,
            "concurrency": self.config.concurrency,
            "queues": json.dumps(self.config.queue_plan.entries),
            "fetch": self.config.fetch,
            "busy": self.state.busy(),
            "quiet": "true" if self.state.quiet.is_set() else "false",
            "stopping": "true" if self.state.stopping.is_set() else "false",
            "version": VERSION,
        }
        rss = process_memory.rss_kib()
        if rss is not None:
            fields["rss_kb"] = rss
        return fields
