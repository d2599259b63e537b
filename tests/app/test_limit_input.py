"""Per-key limits' bad input, and the gate a worker runs each limited job through, on a real
Redis without worker processes: what is refused where (class statement, enqueue, run), and
what a refusal writes."""

from __future__ import annotations

import json
import logging
import time

import attrs
import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.limit_store import LimitStore
from cogworker.app.job_record import build_job
from cogworker.app.worker.limit_gate import LimitGate
from cogworker.app.worker.state import WorkerState
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from tests.app.jobs import Count
from tests.app.limit_jobs import HoldsOne, ThreeAtOnce

IDENTITY = "host:1:gate"


class NumberKey(cogworker.Job, limit=cogworker.Concurrency(max=1, key=lambda args: args[0])):
    """Its key function returns the first argument as it is: a number is refused."""

    def perform(self, tenant: object) -> None:
        """Nothing."""


def test_bad_limits_are_refused_at_the_class_statement() -> None:
    """max < 1, per ≤ 0 and a limit that is neither kind: an error naming the value."""
    with pytest.raises(ValueError, match="max must be a whole number ≥ 1, got 0"):

        class NoPlace(cogworker.Job, limit=cogworker.Concurrency(max=0)):
            pass

    with pytest.raises(ValueError, match="per must be a positive, finite number of seconds"):

        class NoWindow(cogworker.Job, limit=cogworker.Rate(max=1, per=0)):
            pass

    with pytest.raises(TypeError, match=r"NotALimit: limit must be cogworker\.Concurrency"):

        class NotALimit(cogworker.Job, limit=5):  # type: ignore[arg-type]  # a user's mistake
            pass


def test_a_key_that_is_no_text_is_refused_at_enqueue_and_nothing_is_pushed(
    rc: redis.Redis, client: cogworker.Client
) -> None:
    """The key function returned 42: a TypeError naming it and the class; the queue is empty,
    and the same class with a text key enqueues."""
    with pytest.raises(TypeError, match=r"NumberKey: a limit key must be a str.*returned 42"):
        client.enqueue(NumberKey, 42)
    assert rc.llen(keys.queue("default")) == 0
    assert client.enqueue(NumberKey, "acme")
    [raw] = rc.lrange(keys.queue("default"), 0, -1)
    assert json.loads(raw)["limit"] == {
        "kind": "concurrency",
        "name": NumberKey.class_path(),
        "key": "acme",
    }


def _gate(rc: redis.Redis, fetch: str = "reliable") -> tuple[LimitGate, WorkerState]:
    state = WorkerState(identity=IDENTITY)
    config = cogworker.Config(orphan_threshold=30.0, fetch=fetch)
    logger = logging.getLogger("cogworker.test.gate")
    return LimitGate(LimitStore(rc), RunStore(rc), config, state, logger), state


def _fetched(rc: redis.Redis, job: JobRecord) -> Fetched:
    """`job` on IDENTITY's in-progress list, as a fetch leaves it."""
    raw = payload.encode(job).encode()
    rc.lpush(keys.in_progress(job.queue, IDENTITY), raw)
    return Fetched(queue=job.queue, raw=raw)


def test_a_job_whose_key_is_full_waits_in_the_schedule_its_refusal_counted(
    rc: redis.Redis,
) -> None:
    """Its key's one place is another jid's: the job leaves the in-progress list for the
    scheduled set, due after its wait, its payload counting one refusal, then two."""
    gate, state = _gate(rc)
    holders = keys.limit("default", "concurrency", "one", "k")
    rc.zadd(holders, {"other": 9e15})
    job = build_job(HoldsOne, ["k"], time.time())
    for waits in (1, 2):
        fetched = _fetched(rc, job)
        state.hold(fetched.raw)
        before = time.time()
        assert gate.admit(job, fetched) is False
        assert rc.llen(keys.in_progress("default", IDENTITY)) == 0
        [(raw, due)] = rc.zrange(keys.schedule("default"), 0, -1, withscores=True)
        assert json.loads(raw)["limit"]["waits"] == waits
        assert due >= before + 0.05 * 2 ** (waits - 1)
        assert not state.holds(fetched.raw)
        rc.delete(keys.schedule("default"))
        job = payload.decode(raw).unwrap()


def test_a_job_popped_by_basic_fetch_whose_key_is_full_waits_too(rc: redis.Redis) -> None:
    """Basic fetch holds the job on no list: the refusal still files it in the schedule."""
    gate, _ = _gate(rc, fetch="basic")
    rc.zadd(keys.limit("default", "concurrency", "one", "k"), {"other": 9e15})
    job = build_job(HoldsOne, ["k"], time.time())
    raw = payload.encode(job).encode()
    assert gate.admit(job, Fetched(queue="default", raw=raw)) is False
    [filed] = rc.zrange(keys.schedule("default"), 0, -1)
    assert json.loads(filed)["jid"] == job.jid


def test_a_job_taking_its_place_holds_it_for_its_settlement_and_renewals(
    rc: redis.Redis,
) -> None:
    """A free key: the job may run, and this process notes the place it holds."""
    gate, state = _gate(rc)
    job = build_job(ThreeAtOnce, ["k", 0], time.time())
    assert gate.admit(job, _fetched(rc, job)) is True
    holders = keys.limit("default", "concurrency", ThreeAtOnce.class_path(), "k")
    assert state.places.place_of(job.jid) == holders
    gate.renew()
    assert rc.zcard(holders) == 1
    gate.let_go(job.jid)
    assert rc.zcard(holders) == 0
    assert state.places.place_of(job.jid) == ""


def test_a_payloads_unreadable_limit_is_an_error_naming_it_and_the_job_runs(
    rc: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """A limit field another program wrote wrong: logged at ERROR naming the value, and the
    job runs without it (never lost, never stuck); a job whose class has no limit (any
    more) runs too."""
    gate, _ = _gate(rc)
    job = build_job(HoldsOne, ["k"], time.time())
    bad = attrs.evolve(job, extra={**job.extra, "limit": {**job.extra["limit"], "key": 7}})  # type: ignore[dict-item]  # JSON
    with caplog.at_level(logging.ERROR):
        assert gate.admit(bad, _fetched(rc, bad)) is None
    assert "the payload's limit key must be a short text, got 7" in caplog.text
    plain = build_job(Count, [], time.time())
    claimed = attrs.evolve(plain, extra={**plain.extra, **job.extra})
    assert gate.admit(claimed, _fetched(rc, claimed)) is None
    assert gate.admit(plain, _fetched(rc, plain)) is None
