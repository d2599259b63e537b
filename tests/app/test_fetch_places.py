"""The fetch taking concurrency places (fetch.lua) for the classes the limit gate met, on a
real Redis without worker processes: a place taken as its job is moved, held by its jid for
one orphan threshold; a job whose key is full refused in the same step and put back in the
schedule uncounted; every other claim left to the gate's own take."""

from __future__ import annotations

import json
import logging
import time

import attrs
import redis

import cogworker
from cogworker import tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import FetchedPlace, FetchStore
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.limit_store import LimitStore
from cogworker.app.job_record import build_job
from cogworker.app.worker.limit_gate import LimitGate
from cogworker.app.worker.run_start import RunStart
from cogworker.app.worker.state import WorkerState
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from tests.app.jobs import Count
from tests.app.limit_jobs import FivePerSecond, HoldsOne, ThreeAtOnce
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:fetch-places"
#: The gate's orphan threshold: how long a place lasts unrenewed.
THRESHOLD = 30.0
CONFIG = cogworker.Config(orphan_threshold=THRESHOLD)


def _gate(rc: redis.Redis) -> tuple[LimitGate, WorkerState]:
    state = WorkerState(identity=IDENTITY)
    logger = logging.getLogger("cogworker.test.fetch-places")
    return LimitGate(LimitStore(rc), RunStore(rc), CONFIG, state, logger), state


def _push(rc: redis.Redis, job: JobRecord) -> None:
    rc.lpush(keys.queue(job.queue), payload.encode(job))


def _met(rc: redis.Redis, gate: LimitGate, job_class: type[cogworker.Job]) -> None:
    """The gate admits one job of `job_class` fetched without a place (as a class's first
    job in a process), lets go of its place if it took one, and so learns the class."""
    first = build_job(job_class, ["learn", 0], time.time())
    _push(rc, first)
    [fetched] = FetchStore(rc).fetch(IDENTITY, ["default"], 1).jobs
    gate.admit(first, fetched)
    gate.let_go(first.jid)
    rc.delete(keys.in_progress("default", IDENTITY))


def _redis_ms(rc: redis.Redis) -> int:
    seconds, micros = rc.time()
    return seconds * 1000 + micros // 1000


def test_a_fetch_takes_the_places_of_the_classes_the_gate_met(rc: redis.Redis) -> None:
    """Once the gate met ThreeAtOnce, its next job's fetch takes its place, held by its jid
    for one orphan threshold on Redis's clock; the gate lets it run with no take of its own
    and this process holds the place (for its heartbeat and its settlement)."""
    gate, state = _gate(rc)
    assert gate.fetch_terms() == ()
    _met(rc, gate, ThreeAtOnce)
    [term] = gate.fetch_terms()
    assert (term.class_name, term.max) == (ThreeAtOnce.class_path(), 3)

    job = build_job(ThreeAtOnce, ["k", 0], time.time())
    _push(rc, job)
    before = _redis_ms(rc)
    [fetched] = FetchStore(rc).fetch(IDENTITY, ["default"], 5, gate.fetch_terms()).jobs
    holders = keys.limit("default", "concurrency", ThreeAtOnce.class_path(), "k")
    assert fetched.place == FetchedPlace(job.jid, holders)
    runs_out = rc.zscore(holders, job.jid)
    assert runs_out is not None
    assert before + THRESHOLD * 1000 <= runs_out <= _redis_ms(rc) + THRESHOLD * 1000
    assert rc.lrange(keys.in_progress("default", IDENTITY), 0, -1) == [fetched.raw]

    state.places.hold(job.jid, holders)  # as the fetcher does with each place taken
    assert gate.admit(job, fetched) is True
    assert state.places.place_of(job.jid) == holders
    assert rc.zcard(holders) == 1


def test_a_job_its_fetch_found_full_waits_in_the_schedule_uncounted(rc: redis.Redis) -> None:
    """The key's one place is another jid's: the fetch moves the job onto the in-progress
    list and notes it waiting, takes no place; the gate files it in the schedule, due after
    its wait, one refusal counted; nothing is counted processed or failed, and the key's
    holders are as they were."""
    gate, state = _gate(rc)
    _met(rc, gate, HoldsOne)
    holders = keys.limit("default", "concurrency", "one", "k")
    rc.zadd(holders, {"other": 9e15})
    job = build_job(HoldsOne, ["k"], time.time())
    _push(rc, job)
    [fetched] = FetchStore(rc).fetch(IDENTITY, ["default"], 5, gate.fetch_terms()).jobs
    assert fetched.place == FetchedPlace(job.jid, "")
    assert rc.zrange(keys.limit_waiting("default", "concurrency", "one", "k"), 0, -1) == [
        job.jid.encode()
    ]

    state.hold(fetched.raw)
    before = time.time()
    assert gate.admit(job, fetched) is False
    assert rc.llen(keys.in_progress("default", IDENTITY)) == 0
    [(raw, due)] = rc.zrange(keys.schedule("default"), 0, -1, withscores=True)
    assert json.loads(raw)["jid"] == job.jid
    assert json.loads(raw)["limit"]["waits"] == 1
    assert due >= before + 0.05
    assert not state.holds(fetched.raw)
    assert state.places.place_of(job.jid) == ""
    assert rc.zrange(holders, 0, -1) == [b"other"]
    assert tracking.totals(rc) == {"processed": 0, "failed": 0}


def test_a_fetch_leaves_every_other_claim_to_the_gate(rc: redis.Redis) -> None:
    """A rate limit's job (its start counts as it starts), a class the gate hasn't met, a
    claim naming another limit, a key longer than the fetch reads, and a job without a
    limit: fetched with no place looked at, and no limit key written."""
    gate, _ = _gate(rc)
    _met(rc, gate, ThreeAtOnce)
    _met(rc, gate, FivePerSecond)
    assert [term.class_name for term in gate.fetch_terms()] == [ThreeAtOnce.class_path()]
    renamed = build_job(ThreeAtOnce, ["k", 0], time.time())
    claim = {**renamed.extra["limit"], "name": "another"}  # type: ignore[dict-item]  # JSON
    jobs = [
        build_job(FivePerSecond, ["k"], time.time()),
        build_job(HoldsOne, ["k"], time.time()),
        attrs.evolve(renamed, extra={**renamed.extra, "limit": claim}),
        build_job(ThreeAtOnce, ["é" * 150, 0], time.time()),  # 300 bytes
        build_job(Count, [], time.time()),
    ]
    rc.flushall()
    for job in jobs:
        _push(rc, job)
    turn = FetchStore(rc).fetch(IDENTITY, ["default"], 10, gate.fetch_terms())
    assert [fetched.place for fetched in turn.jobs] == [None] * len(jobs)
    assert rc.keys("*limit*") == []


def test_a_job_dropped_unrun_lets_go_of_the_place_its_fetch_took(rc: redis.Redis) -> None:
    """A job with a place taken by its fetch that won't run (its payload unreadable, or
    expired): the place is let go of, and this process holds it no more."""
    gate, state = _gate(rc)
    _met(rc, gate, ThreeAtOnce)
    job = build_job(ThreeAtOnce, ["k", 0], time.time())
    _push(rc, job)
    [fetched] = FetchStore(rc).fetch(IDENTITY, ["default"], 1, gate.fetch_terms()).jobs
    assert fetched.place is not None
    state.places.hold(fetched.place.jid, fetched.place.holders)
    assert rc.zcard(fetched.place.holders) == 1

    RunStart(RunStore(rc), CONFIG, state, gate.logger, gate=gate).let_go_unrun(fetched)
    assert rc.zcard(fetched.place.holders) == 0
    assert state.places.place_of(job.jid) == ""


def test_a_place_is_taken_in_the_slot_of_the_queue_the_plan_fetched_it_from(
    rc: redis.Redis,
) -> None:
    """A plain job on the first queue, a limited one on the second (the plan's second round
    trip): the limited one's place is taken under its own queue's name, numbered within its
    own call's reply; the plain one has none."""
    gate, _ = _gate(rc)
    _met(rc, gate, ThreeAtOnce)
    _push(rc, build_job(Count, [1], time.time()))
    limited = attrs.evolve(build_job(ThreeAtOnce, ["k", 0], time.time()), queue="other")
    _push(rc, limited)

    plain, taken = FetchStore(rc).fetch(IDENTITY, ["default", "other"], 5, gate.fetch_terms()).jobs

    holders = keys.limit("other", "concurrency", ThreeAtOnce.class_path(), "k")
    assert (plain.queue, plain.place) == ("default", None)
    assert (taken.queue, taken.place) == ("other", FetchedPlace(limited.jid, holders))
    assert rc.zscore(holders, limited.jid) is not None
    assert rc.lrange(keys.in_progress("other", IDENTITY), 0, -1) == [taken.raw]
