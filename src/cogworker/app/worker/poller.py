"""The poller: scheduled and retry jobs whose time has come go onto their queues.

Every process polls; the move script makes each entry move at most once.
Each queue has its own scheduled and retry sets: a pass looks at all of them
in one round trip (`DueStore.due_sets`) and drains those with a due entry.
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

from cogworker.adapters.jobs.due import DueStore
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.app.job_record import new_jid
from cogworker.app.worker.backoff import repeat
from cogworker.domain import payload

BATCH = 100


@attrs.define
class Poller:
    """Moves due entries of the scheduled and retry sets."""

    dues: DueStore
    recovers: RecoverStore
    interval: float
    stopping: threading.Event
    logger: logging.Logger
    #: What "due" is measured on: Redis's clock in a worker (`RedisClock`), so a host
    #: whose own clock is off neither runs jobs early nor sits on them.
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)

    def poll(self) -> int:
        """One pass over every queue's scheduled and retry sets; how many jobs this process
        moved."""
        due = self.dues.due_sets(self.clock())
        return sum(self._drain(sorted_set, queue) for sorted_set, queue in due)

    def run(self) -> None:
        """The thread's loop."""
        repeat(self._poll_step, what="poll for due jobs", logger=self.logger, until=self.stopping)

    def _poll_step(self) -> float:
        self.poll()
        return self.interval * self.rng.uniform(0.5, 1.5)

    def _drain(self, sorted_set: str, queue: str) -> int:
        moved = 0
        while True:
            now = self.clock()
            entries = self.dues.due(sorted_set, now, BATCH)
            moves = [
                move for entry in entries if (move := self._move_of(sorted_set, queue, entry, now))
            ]
            if moves:
                moved += sum(self.dues.move_due(sorted_set, moves))
            if len(entries) < BATCH:
                return moved

    def _move_of(
        self, sorted_set: str, queue: str, entry: bytes, now: float
    ) -> tuple[bytes, str, str] | None:
        decoded = payload.decode(entry)
        if not is_successful(decoded):
            problem = decoded.failure()
            holder: tuple[str, Literal["zset"]] = (sorted_set, "zset")
            buried = self.recovers.bury_unreadable(
                holder, entry, problem, jid=new_jid(), now=now, queue=queue
            )
            if buried:
                self.logger.error(
                    "an unparseable entry moved to dead",
                    extra={"queue": sorted_set, "error": str(problem)},
                )
            return None
        job = decoded.unwrap()
        return entry, job.queue, payload.encode(job, enqueued_at=now)
