"""The fetcher: takes jobs for the idle processors, and for the prefetch buffer if any.

Taking only as many jobs as there are free slots (see `FetchSlots`) keeps
the in-progress list to what is being worked on, plus at most `prefetch`
jobs waiting for a thread.  One queue is
waited on with a blocking move (a job starts the moment it is pushed);
several are looked at by the fetch plan (a script per queue, in their slots:
`FetchStore.fetch`), with a short growing pause while all are empty.

Paused queues (`client.pause`) stay in the order: the fetch script skips
them and its reply says which were paused, so a fetch costs one `EVALSHA`
with or without pauses, and the fetcher learns of a pause or a resume from
the reply it gets anyway.  A blocking wait is only ever made on queues that
reply found running; a job it takes from a queue paused meanwhile (a wait
that began before the pause) goes back instead of running: no job of a
paused queue starts after `pause` returns.  With every queue paused, the
fetcher runs the script once per idle pause (at most
`fetch_idle_max_interval` apart), never a blocking wait: it would take a
job at once only to put it back.

Reliable fetch takes jobs only under the lease (`lease.py`): a process whose
last beat is a threshold old may have been declared gone, so it waits for
its heartbeat first; a fetch whose reply comes after the process learnt it
was declared gone (it was paused meanwhile) puts its jobs back, unrun.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence

import attrs
import redis
from returns.pipeline import is_successful

from cogworker.adapters import key_guard
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.connection import BLOCK_SECONDS
from cogworker.adapters.jobs.fetch import Fetched, FetchStore, Turn
from cogworker.adapters.limit_store import PlaceTerm
from cogworker.app.config import Config
from cogworker.app.worker.backoff import Backoff
from cogworker.app.worker.slots import FetchSlots
from cogworker.app.worker.state import WorkerState
from cogworker.domain import payload
from cogworker.domain.queues import QueuePlan, fetch_order

#: How often queues left out for a key of the wrong type are looked at again.
RECHECK_SECONDS = 10.0
#: First pause when every queue was empty (several queues); doubles up to the config's max.
IDLE_PAUSE = 0.002


@attrs.define
class Fetcher:
    """Hands fetched jobs to `deliver` while the process is neither quiet nor stopping."""

    store: FetchStore
    config: Config
    state: WorkerState
    logger: logging.Logger
    #: Takes each fetch's jobs, once they are held (see handoff).
    deliver: Callable[[list[Fetched]], None]
    slots: FetchSlots
    #: The queues as configured; `_usable` leaves out those KeyGuard found broken.
    plan: QueuePlan
    #: The classes whose jobs' concurrency places the fetch takes (`LimitGate.fetch_terms`).
    place_terms: Callable[[], Sequence[PlaceTerm]] = tuple
    rng: random.Random = attrs.field(factory=random.Random)
    _usable: QueuePlan = attrs.field(factory=lambda: QueuePlan(entries=()))
    _broken: frozenset[str] = frozenset()
    _checked_at: float = 0.0
    _idle_pause: float = 0.0
    _strays_possible: bool = False

    def check_queues(self) -> None:
        """Leave out queues whose key holds another Redis type, naming them (KeyGuard)."""
        expected = {keys.queue(name): "list" for name in self.plan.names}
        wrong = key_guard.wrong_types(self.store.client, expected)
        broken = frozenset(problem.key for problem in wrong)
        if broken != self._broken:
            for problem in wrong:
                self.logger.error("KeyGuard: %s; not fetching from it until fixed", problem)
            if self._broken - broken:
                self.logger.info(
                    "KeyGuard: %s usable again", ", ".join(sorted(self._broken - broken))
                )
        self._broken = broken
        self._usable = QueuePlan(
            entries=tuple(
                entry for entry in self.plan.entries if keys.queue(entry[0]) not in broken
            )
        )
        self._checked_at = time.monotonic()

    def run(self) -> None:
        """The thread's loop."""
        backoff = Backoff("fetch", self.logger)
        self._guarded(self.check_queues, backoff)
        while not self.state.stopping.is_set():
            wanted = self._wanted()
            if not wanted:
                continue
            try:
                let_go = self.state.let_go_count()
                fetched = self._fetch(wanted)
                if not self.state.hold_fetched([job.raw for job in fetched], let_go):
                    fetched = self._put_back_late(fetched)
                backoff.succeeded()
            except redis.ResponseError as error:
                self._release(wanted)
                self._guarded(self.check_queues, backoff)
                if not self._broken:  # not a key of the wrong type: some other refusal
                    self.state.stopping.wait(backoff.failed(error))
                continue
            except Exception as error:  # Redis away, or a bad turn the loop must outlive
                # The move may have happened with its reply lost: look for strays.
                self._strays_possible = True
                self._release(wanted)
                self.state.stopping.wait(backoff.failed(error))
                continue
            self._release(wanted - len(fetched))
            for job in fetched:
                if job.place is not None and job.place.holders:
                    self.state.places.hold(job.place.jid, job.place.holders)
            if fetched:
                self.deliver(fetched)

    def _requeue_strays(self) -> None:
        """Put back jobs on this process's list that no fetch reply delivered.

        Safe only here: the fetcher is the only thread adding to the list,
        and no fetch of its own is in flight now.
        """
        for queue_name in self.plan.names:
            for raw in self.store.in_progress(self.state.identity, queue_name):
                if self.state.holds(raw):
                    continue
                # Back to the queue whose list held it (its slot), whatever its payload says.
                if self.store.requeue_one(self.state.identity, Fetched(queue=queue_name, raw=raw)):
                    decoded = payload.decode(raw)
                    jid = decoded.unwrap().jid if is_successful(decoded) else None
                    self.logger.warning(
                        "a job fetched while Redis was failing went back to its queue",
                        extra={"jid": jid, "queue": queue_name},
                    )
        self._strays_possible = False

    def _guarded(self, step: Callable[[], None], backoff: Backoff) -> None:
        try:
            step()
        except Exception as error:  # as in `run`
            self.state.stopping.wait(backoff.failed(error))

    def _fetch(self, wanted: int) -> list[Fetched]:
        if self._strays_possible:
            self._requeue_strays()
        if self._broken and time.monotonic() - self._checked_at > RECHECK_SECONDS:
            self.check_queues()
        if not self._usable.entries:
            self.state.stopping.wait(RECHECK_SECONDS / 10)
            return []
        order = fetch_order(self._usable, self.rng)
        turn = self._take(order, wanted)
        if turn.paused and any(job.queue in turn.paused for job in turn.jobs):
            return self._put_back_paused(turn.jobs, turn.paused)
        return turn.jobs

    def _take(self, order: tuple[str, ...], wanted: int) -> Turn:
        """One fetch: the plan over the queues in `order`, else a blocking wait on the one
        running queue, else the idle pause."""
        identity, basic = self.state.identity, self.config.fetch == "basic"
        if basic:
            turn = self.store.pop(order, wanted)
        else:
            turn = self.store.fetch(identity, order, wanted, self.place_terms())
        if turn.jobs:
            self._idle_pause = 0.0
            return turn
        running = [name for name in order if name not in turn.paused] if turn.paused else order
        if len(running) == 1 and basic:
            return self.store.pop_blocking(running[0], BLOCK_SECONDS)
        if len(running) == 1:
            return self.store.fetch_blocking(identity, running[0], BLOCK_SECONDS)
        self._pause_while_idle()  # several queues all empty, or every queue paused
        return turn

    def _put_back_paused(self, jobs: list[Fetched], paused: frozenset[str]) -> list[Fetched]:
        """The jobs whose queue isn't paused; the others go back to the front of their queue.

        A blocking wait that began before a pause brings a job that must not
        start (the fetch scripts never take from a paused queue).  It never
        ran: back where it was, the newest first so the oldest is at the
        front again.  If Redis fails here, reliable fetch leaves it on the
        in-progress list, where `_requeue_strays` finds it (the loop marks
        strays possible when Redis fails).
        """
        for job in reversed(jobs):
            if job.queue not in paused:
                continue
            if self.config.fetch == "basic":
                self.store.push_back(job)
            else:
                self.store.requeue_one(self.state.identity, job)
            self.logger.debug(
                "a job taken as its queue was paused went back", extra={"queue": job.queue}
            )
        return [job for job in jobs if job.queue not in paused]

    def _wanted(self) -> int:
        """How many jobs to fetch now: none while quiet or without the lease (see
        `lease.py`), else as many as slots free up within a moment."""
        if self.state.quiet.is_set():
            self.state.stopping.wait(0.2)
            return 0
        if not self.state.lease.wait(0.2):
            return 0
        return self.slots.take(timeout=0.2)

    def _put_back_late(self, jobs: list[Fetched]) -> list[Fetched]:
        """A fetch whose reply came after this process let go of its jobs (declared gone):
        they go back to the front of their queues (each only if still on this process's
        list: the recovery may have requeued it already), none kept.  The limit places
        the fetch took run out by themselves."""
        for job in reversed(jobs):
            self.store.requeue_one(self.state.identity, job)
        self.logger.warning(
            "%d jobs fetched as this process was declared gone went back",
            len(jobs),
            extra={"reason": "declared-gone"},
        )
        return []

    def _pause_while_idle(self) -> None:
        self._idle_pause = min(
            self.config.fetch_idle_max_interval, (self._idle_pause * 2) or IDLE_PAUSE
        )
        self.state.stopping.wait(self._idle_pause)

    def _release(self, count: int) -> None:
        if count > 0:
            self.slots.give_back(count)
