"""The limit gate: a job with a per-key limit (`domain.key_limits`) takes its place before
it runs, or goes back to the scheduled set for a while, uncounted.

A concurrency place is held by the job's jid: this process's heartbeat
renews it (`renew`) while the job runs, its settlement lets it go in the
same script (settle.lua: the settler names it, see `limit_places`),
and a place whose process died runs out within the orphan threshold.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable

import attrs
import redis

from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.limit_store import LimitStore, spot_of
from cogworker.app.config import Config
from cogworker.app.job import load_job_class
from cogworker.app.worker.state import WorkerState
from cogworker.domain import key_limits, payload
from cogworker.domain.job import JobRecord
from cogworker.exceptions import UnknownJobClassError


@attrs.define
class LimitGate:
    """Takes a job's place under its limit as it starts, or puts the job back for later."""

    limits: LimitStore
    runs: RunStore
    config: Config
    state: WorkerState
    logger: logging.Logger
    clock: Callable[[], float] = time.time
    rng: random.Random = attrs.field(factory=random.Random)

    def admit(self, job: JobRecord, fetched: Fetched) -> bool | None:
        """Take `job`'s place: True if it may run, False if it was put back (or can't be
        checked now: then it stays in progress), None if no limit applies to it."""
        if key_limits.FIELD not in job.extra:
            return None
        found = self._limit_of(job)
        if found is None:
            return None
        claim, limit = found
        spot = spot_of(fetched.queue, claim, limit)
        try:
            taken, free_in = self.limits.take(
                spot, job.jid, self.config.orphan_threshold, self.clock()
            )
            if taken:
                if claim.kind == "concurrency":
                    self.state.places.hold(job.jid, spot.holders_key())
                return True
            waited = key_limits.refused(claim)
            delay = key_limits.wait_delay(limit, waited.waits, free_in, self.rng.random())
            extra = {**job.extra, **key_limits.payload_fields(waited)}
            filed = payload.encode(attrs.evolve(job, extra=extra))
            owner = None if self.config.fetch == "basic" else self.state.identity  # basic: no list
            deferred = self.runs.defer(owner, fetched, self.clock() + delay, filed)
        except redis.RedisError as error:
            self.logger.warning(
                "couldn't take the job's limit place (%s); it stays in progress", error
            )
            return False  # left on the in-progress list: requeued at shutdown, or recovered
        self.state.release(fetched.raw)
        self.logger.info(
            "its limit %s %r is full; put back for %.1fs",
            claim.name,
            claim.key,
            delay,
            extra={"jid": job.jid, "reason": "limit-full" if deferred else "lost-ownership"},
        )
        return False

    def let_go(self, jid: str) -> None:
        """`jid` took its place and won't run now after all (a while_executing duplicate)."""
        holders = self.state.places.forget(jid)
        if holders:
            self._release({holders: [jid]})

    def let_go_all(self) -> None:
        """At a stop, once the jobs still running are handed back: let go of their places
        (their next runs take places again) rather than block their keys until they run out."""
        held = self.state.places.by_key()
        if held:
            self._release(held)

    def _release(self, held: dict[str, list[str]]) -> None:
        try:
            self.limits.release(held)
        except redis.RedisError as error:  # they run out within the orphan threshold
            self.logger.warning("couldn't let go of %d limit places (%s)", len(held), error)

    def renew(self) -> None:
        """Renew the places this process's running jobs hold (the heartbeat calls it)."""
        self.limits.renew(self.state.places.by_key(), self.config.orphan_threshold)

    def _limit_of(self, job: JobRecord) -> tuple[key_limits.Claim, key_limits.Limit] | None:
        """The job's claim and its class's limit now; None to run it unlimited: its class
        can't be loaded (its run fails on that) or no longer has that limit, or its payload's
        limit can't be read (said at ERROR, naming it)."""
        try:
            claim = key_limits.claim_of(job.extra)
            job_class = load_job_class(job.class_name, self.config.job_modules)
        except UnknownJobClassError:
            return None
        except ValueError as error:
            self.logger.error("%s; it runs without its limit", error, extra={"jid": job.jid})
            return None
        limit = job_class.cogworker_options.limit
        if claim is None or limit is None or not key_limits.governs(limit, claim, job.class_name):
            return None
        return claim, limit
