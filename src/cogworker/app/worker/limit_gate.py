"""The limit gate: a job with a per-key limit (`domain.key_limits`) takes its place before
it runs, or goes back to the scheduled set for a while, uncounted.

A concurrency place is held by the job's jid: this process's heartbeat
renews it (`renew`) while the job runs, its settlement lets it go in the
same script (settle.lua: the settler names it, see `limit_places`),
and a place whose process died runs out within the orphan threshold.

The fetch takes the concurrency places of the classes the gate has met
(`fetch_terms`) as it moves their jobs, in its own script: the gate then
only puts back the jobs it found full.  A class's first job here, a job
fetched by a blocking wait, and every rate limit's job (its start counts
when it starts, not while it waits for a thread) take theirs here.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable

import attrs
import redis

from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.limit_store import LimitStore, PlaceTerm, place_term, spot_of
from cogworker.app.config import Config
from cogworker.app.job_loading import load_job_class
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
    #: The classes whose jobs' places the fetch takes, by class (see `fetch_terms`).
    _terms: dict[str, PlaceTerm] = attrs.field(factory=dict, init=False)
    _terms_listed: tuple[PlaceTerm, ...] = attrs.field(default=(), init=False)
    _terms_lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def fetch_terms(self) -> tuple[PlaceTerm, ...]:
        """The classes whose jobs' concurrency places the fetch takes: those this gate met."""
        return self._terms_listed

    def admit(self, job: JobRecord, fetched: Fetched) -> bool | None:
        """Take `job`'s place (unless its fetch took it): True if it may run, False if it was
        put back (or can't be checked now: then it stays in progress), None if no limit
        applies to it."""
        if key_limits.FIELD not in job.extra:
            return None
        place = fetched.place
        if place is not None and place.holders:
            self._register(job, fetched, place.holders)
            return True
        found = self._limit_of(job)
        if found is None:
            return None
        claim, limit = found
        spot = spot_of(fetched.queue, claim, limit)
        self._learn(job.class_name, limit)
        try:
            if place is None:
                taken, free_in = self.limits.take(
                    spot, job.jid, self.config.orphan_threshold, self.clock()
                )
            else:  # refused by its fetch
                taken, free_in = False, 0.0
            if taken:
                if claim.kind == "concurrency":
                    self.state.places.hold(job.jid, spot.holders_key())
                return True
            waited = key_limits.refused(claim)
            delay = key_limits.wait_delay(limit, waited.waits, free_in, self.rng.random())
            extra = {**job.extra, **key_limits.payload_fields(waited)}
            filed = payload.encode(attrs.evolve(job, extra=extra))
            owner = None if self.config.fetch == "basic" else self.state.identity  # basic: no list
            deferred = self.runs.defer(owner, fetched, self.clock() + delay, filed, jid=job.jid)
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

    def _learn(self, class_name: str, limit: key_limits.Limit) -> None:
        """From now on, the fetch takes the places of `class_name`'s jobs (concurrency)."""
        if class_name in self._terms:
            return
        term = place_term(class_name, limit, self.config.orphan_threshold)
        if term is None:
            return
        with self._terms_lock:  # the processor threads learn at once
            self._terms[class_name] = term
            self._terms_listed = tuple(self._terms.values())

    def _register(self, job: JobRecord, fetched: Fetched, holders: str) -> None:
        """List a limit key whose place the fetch took in the registry (the dashboard's)."""
        now = self.clock()
        if self.limits.registered(holders, now):
            return
        found = self._limit_of(job)
        if found is None:
            return
        try:
            self.limits.register(spot_of(fetched.queue, *found), now)
        except redis.RedisError as error:  # listed with a later job's
            self.logger.warning("couldn't list a limit key for the dashboard (%s)", error)

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
