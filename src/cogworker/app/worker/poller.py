"""The poller: scheduled and retry jobs whose time has come go onto their queues.

Every process polls; the move script makes each entry move at most once.
The pause between polls is drawn around `poll_interval` so that many
processes spread out instead of polling in step.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Literal

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.app.job_record import new_jid
from cogworker.app.worker.backoff import repeat
from cogworker.domain import payload

BATCH = 100


@attrs.define
class Poller:
    """Moves due entries of the scheduled and retry sets."""

    enqueues: EnqueueStore
    recovers: RecoverStore
    interval: float
    stopping: threading.Event
    logger: logging.Logger
    #: What "due" is measured on: Redis's clock in a worker (`RedisClock`), so a host
    #: whose own clock is off neither runs jobs early nor sits on them.
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)

    def poll(self) -> int:
        """One pass over both sets; how many jobs this process moved."""
        return sum(self._drain(key) for key in (keys.SCHEDULE, keys.RETRY))

    def run(self) -> None:
        """The thread's loop."""
        repeat(self._poll_step, what="poll for due jobs", logger=self.logger, until=self.stopping)

    def _poll_step(self) -> float:
        self.poll()
        return self.interval * self.rng.uniform(0.5, 1.5)

    def _drain(self, sorted_set: str) -> int:
        moved = 0
        while True:
            now = self.clock()
            entries = self.enqueues.due(sorted_set, now, BATCH)
            moves = [move for entry in entries if (move := self._move_of(sorted_set, entry, now))]
            if moves:
                moved += sum(self.enqueues.move_due(sorted_set, moves))
            if len(entries) < BATCH:
                return moved

    def _move_of(self, sorted_set: str, entry: bytes, now: float) -> tuple[bytes, str, str] | None:
        decoded = payload.decode(entry)
        if not is_successful(decoded):
            problem = decoded.failure()
            holder: tuple[str, Literal["zset"]] = (sorted_set, "zset")
            if self.recovers.bury_unreadable(holder, entry, problem, jid=new_jid(), now=now):
                self.logger.error(
                    "an unparseable entry moved to dead",
                    extra={"queue": sorted_set, "error": str(problem)},
                )
            return None
        job = decoded.unwrap()
        return entry, job.queue, payload.encode(job, enqueued_at=now)
