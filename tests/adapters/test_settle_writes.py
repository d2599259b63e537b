"""Every settlement's write, built without Redis by `settle_writes`, then accepted by a real one.

The settlements are the domain's own variants (`Ack`, `ToRetry`, `ToDead`, `Discarded`,
`Cancelled`, `Expired`) with any of their effects, turned into records as the worker
does (`outcome_record`), of jobs in a batch or not, holding a limit's place or not.
"""

from __future__ import annotations

from typing import Any

import attrs
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.crc import key_slot

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.batch_events import BID_FIELD
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import outcome_record
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.jobs.settle_writes import Placement, calls_of, write_of
from cogworker.domain import payload, status
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.job import JobRecord
from cogworker.domain.locks import Extend, LockEffect, Release
from cogworker.domain.records import AttemptRecord, RunRecord
from cogworker.domain.results import Kept
from cogworker.domain.settlement import (
    Ack,
    Cancelled,
    Discarded,
    Effects,
    Expired,
    Settlement,
    ToDead,
    ToRetry,
)
from tests.domain.strategies import job_records

QUEUE = "mail"
NOW = 1_800_000_000.0
HOLDER = keys.in_progress(QUEUE, "host:1:writes")
AT = Placement(holder=HOLDER, owned=True, now=NOW, retention=Retention())
#: A key in QUEUE's slot: every key of a settlement's call is in it.
QUEUE_SLOT = key_slot(keys.retry(QUEUE).encode())
jids = st.text("abcdefghij0123456789", min_size=1, max_size=8)
#: Around NOW: a death long before it is trimmed off the dead set at once.
times = st.floats(min_value=NOW - 3600, max_value=NOW + 3600, allow_nan=False)
lock_changes = st.sampled_from([Release(), Extend(ttl=30.0)])
timed_out = st.sampled_from([None, "soft", "hard"])


@st.composite
def _effects(draw: st.DrawFn, jid: str) -> Effects:
    """Any effects a settlement of `jid` on QUEUE may carry."""
    unique = st.builds(LockEffect, key=st.just(keys.unique_lock(QUEUE, jid)), change=lock_changes)
    running = st.builds(
        LockEffect, key=st.just(keys.periodic_running(QUEUE, "nightly")), change=st.just(Release())
    )
    attempt = st.builds(
        AttemptRecord,
        attempt=st.integers(1, 30),
        failed_at=times,
        error_class=st.text(max_size=10),
        error_message=st.text(max_size=20),
        outcome=st.sampled_from(["retrying", "dead", "killed", "discarded"]),
        timed_out=timed_out,
    )
    history = st.builds(
        RunRecord,
        jid=st.just(jid),
        class_name=st.just("app.Mail"),
        queue=st.just(QUEUE),
        started_at=times,
        ended_at=times,
        outcome=st.sampled_from(["success", "retrying", "dead"]),
        process=st.just("host:1"),
        timed_out=timed_out,
    )
    sample = st.builds(
        RunSample, queue=st.just(QUEUE), micros=st.integers(0, 10**9), failed=st.booleans()
    )
    result = st.builds(
        Kept,
        queue=st.just(QUEUE),
        record=st.none() | st.text(max_size=20).map(lambda text: f'{{"value":"{text}"}}'),
        keep=st.integers(1, 86_400),
        index_ttl=st.integers(1, 86_400),
    )
    return Effects(
        unique_lock=draw(st.none() | unique),
        running_lock=draw(st.none() | running),
        status=draw(st.none() | st.sampled_from(status.STATUSES)),
        attempt=draw(st.none() | attempt),
        history=draw(st.none() | history),
        history_per_job=draw(st.booleans()),
        sample=draw(st.none() | sample),
        result=draw(st.none() | result),
    )


@st.composite
def orders(draw: st.DrawFn) -> SettleOrder:
    """A settle order of any settlement variant of a job of QUEUE, in a batch or not,
    holding a concurrency limit's place or not."""
    jid = draw(jids)
    job: JobRecord = attrs.evolve(draw(job_records()), jid=jid, queue=QUEUE, class_name="app.Mail")
    if draw(st.booleans()):
        job = attrs.evolve(job, extra={**job.extra, BID_FIELD: "b1"})
    effects = draw(_effects(jid))
    at = draw(times)
    variants: list[Settlement] = [
        Ack(jid=jid, class_name=job.class_name, effects=effects),
        ToRetry(job=job, at=at, effects=effects),
        ToDead(job=job, at=at, effects=effects),
        Discarded(job=job, effects=effects),
        Cancelled(job=job, effects=effects),
        Expired(job=job, effects=effects),
    ]
    settlement = draw(st.sampled_from(variants))
    place = draw(st.sampled_from(["", keys.limit(QUEUE, "concurrency", "per_user", "u1")]))
    outcome = outcome_record(settlement, limit_place=place)
    return SettleOrder(
        fetched=Fetched(queue=QUEUE, raw=payload.encode(job).encode()), outcome=outcome
    ).with_batch()


def _script_of(order: SettleOrder) -> scripts.LuaScript:
    if order.outcome.is_plain_ack:
        return scripts.ACK_MANY
    if order.outcome.is_plain_retry:
        return scripts.RETRY_MANY
    return scripts.SETTLE


@given(orders(), orders())
@settings(max_examples=200, deadline=None)
def test_every_settlement_builds_one_call_in_its_queue_slot(
    first: SettleOrder, second: SettleOrder
) -> None:
    """Built without Redis: a plain ack is an ack_many entry, a plain retry a retry_many
    one, any other a settle call; two of one joinable script are one call, their own parts
    concatenated behind the shared one; every call fits its script and keeps to one slot."""
    writes = [write_of(first, AT), write_of(second, AT)]
    assert [w.shared.script for w in writes] == [_script_of(first), _script_of(second)]
    calls = calls_of(writes)
    if writes[0].shared == writes[1].shared and writes[0].shared.script is not scripts.SETTLE:
        ((call, answers),) = calls
        assert answers == [0, 1]
        assert call.keys == writes[0].shared.keys + writes[0].keys + writes[1].keys
        assert call.args == writes[0].shared.args + writes[0].args + writes[1].args
    else:
        assert sorted(i for _, answers in calls for i in answers) == [0, 1]
    for call, _ in calls:
        call.script.check(call.keys, call.args)
        assert {key_slot(key.encode()) for key in call.keys} == {QUEUE_SLOT}


def _expected_changes(order: SettleOrder) -> dict[str, Any]:
    """What the write of `order` must leave (as `_read_changes` reads it back)."""
    outcome = order.outcome
    expected: dict[str, Any] = {"processed": b"1", "on the list": 0}
    if outcome.kind in ("retry", "dead"):
        filed = keys.retry(QUEUE) if outcome.kind == "retry" else keys.dead(QUEUE)
        expected["filed"] = (filed, outcome.score)
    if outcome.status:
        expected["status"] = outcome.status.encode()
    if outcome.result is not None and outcome.result.record:
        expected["result"] = [outcome.result.record.encode()]
    if outcome.unique_action == "release":
        expected["unique lock"] = None
    if outcome.limit_place:
        expected["holds a place"] = None
    return expected


def _read_changes(rc: redis.Redis, order: SettleOrder, expected: dict[str, Any]) -> dict[str, Any]:
    outcome, jid = order.outcome, order.outcome.jid
    found: dict[str, Any] = {
        "processed": rc.get(keys.stat(QUEUE, "processed")),
        "on the list": rc.llen(HOLDER),
    }
    if "filed" in expected:
        filed = expected["filed"][0]
        found["filed"] = (filed, rc.zscore(filed, outcome.payload))
    if "status" in expected:
        found["status"] = rc.hget(keys.status(QUEUE, jid), "status")
    if "result" in expected:
        found["result"] = rc.lrange(keys.result(QUEUE, jid), 0, -1)
    if "unique lock" in expected:
        found["unique lock"] = rc.get(outcome.unique_lock)
    if "holds a place" in expected:
        found["holds a place"] = rc.zscore(outcome.limit_place, jid)
    return found


@given(order=orders())
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_real_redis_accepts_every_settlement_write(rc: redis.Redis, order: SettleOrder) -> None:
    """Each built call, sent to a real Redis: no error reply, the entry written (1), its
    list, counters, sets, status, result, lock and limit place changed as its effects say."""
    rc.flushdb()
    rc.lpush(HOLDER, order.fetched.raw)
    if order.outcome.unique_lock:
        rc.set(order.outcome.unique_lock, order.outcome.jid)
    if order.outcome.limit_place:
        rc.zadd(order.outcome.limit_place, {order.outcome.jid: NOW})
    ((call, _),) = calls_of([write_of(order, AT)])

    reply = call.run(rc)

    assert reply in (1, [1])
    expected = _expected_changes(order)
    assert _read_changes(rc, order, expected) == expected
