"""The settling scripts where results, per-key limits and batches meet, on a real Redis:
one settlement of a limited batch member keeping its result writes all three (handed
over or not, next to plain acks in one call); a retry, not final, writes its result's
drop and its place's release but no event."""

from __future__ import annotations

import json

import redis

from cogworker.adapters import jid_index
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.handover import HandoverStore, parse_handover_record
from cogworker.adapters.jobs.outcome import OutcomeKind, OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain import results
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:together"
NOW = 1_800_000_000.0
PLACE = keys.limit("work", "concurrency", "app.Work", "k")


def _held(rc: redis.Redis, jid: str, bid: str = "b1") -> Fetched:
    """`jid`, a member of `bid` (holding its limit place) or of no batch (""), taken by
    IDENTITY."""
    job = {"class": "app.Work", "args": [], "jid": jid, "queue": "work"}
    raw = json.dumps({**job, "bid": bid} if bid else job).encode()
    rc.lpush(keys.in_progress("work", IDENTITY), raw)
    if bid:
        rc.zadd(PLACE, {jid: NOW + 60})
    return Fetched(queue="work", raw=raw)


def _outcome(
    jid: str, kind: OutcomeKind, record: str | None, *, plain: bool = False
) -> OutcomeRecord:
    kept = results.Kept(queue="work", record=record, keep=30, index_ttl=30)
    if plain:
        return OutcomeRecord(kind=kind, jid=jid, history_per_job=False, result=kept)
    return OutcomeRecord(kind=kind, jid=jid, score=NOW, payload=jid, limit_place=PLACE, result=kept)


def _result(rc: redis.Redis, jid: str) -> list[bytes]:
    return rc.lrange(keys.result("work", jid), 0, -1)  # type: ignore[return-value]


def test_a_handed_over_settlement_keeps_its_batch_place_and_result(rc: redis.Redis) -> None:
    """Handed over by a stopping process and written by another: its event, its place let
    go, its result and its jid index."""
    handovers = HandoverStore(SettleStore(rc))
    record = results.success_record("7")
    assert handovers.hand_over(IDENTITY, _held(rc, "m1"), _outcome("m1", "ack", record))
    (unsettled,) = handovers.unsettled()
    (handed,) = unsettled.entries
    outcome = parse_handover_record(handed)
    assert outcome is not None
    assert (outcome.bid, outcome.limit_place, outcome.result) == (
        "b1",
        PLACE,
        _outcome("m1", "ack", record).result,
    )
    assert handovers.settle_handed_over(unsettled.key, handed, outcome, NOW)
    assert rc.lrange(keys.batch_events("work"), 0, -1) == [b"b1 m1 ack"]
    assert rc.zcard(PLACE) == 0
    assert _result(rc, "m1") == [record.encode()]
    assert rc.get(keys.jid_index("m1")) == f"{jid_index.ENDED}work".encode()  # it ended


def test_one_call_settles_plain_acks_members_and_retries_each_its_own_way(
    rc: redis.Redis,
) -> None:
    """A plain ack keeping its result (ack_many), a member that died and one retried (settle),
    in one call: each reply in its place; the death's event and result, the retry's place let
    go with no event and no result (an earlier one dropped)."""
    died = results.ended_record("dead", "ValueError", "no luck")
    rc.rpush(keys.result("work", "m3"), died)  # from an earlier end
    orders = [
        SettleOrder(
            fetched=_held(rc, "p1", bid=""), outcome=_outcome("p1", "ack", "1", plain=True)
        ),
        SettleOrder(fetched=_held(rc, "m2"), outcome=_outcome("m2", "dead", died)),
        SettleOrder(fetched=_held(rc, "m3"), outcome=_outcome("m3", "retry", None)),
    ]
    assert SettleStore(rc).settle_many(IDENTITY, orders, NOW) == [True, True, True]
    assert rc.lrange(keys.batch_events("work"), 0, -1) == [b"b1 m2 dead"]
    assert (_result(rc, "p1"), _result(rc, "m2"), _result(rc, "m3")) == (
        [b"1"],
        [died.encode()],
        [],
    )
    assert rc.zcard(PLACE) == 0
    assert rc.llen(keys.in_progress("work", IDENTITY)) == 0
    assert rc.zcard(keys.retry("work")) == rc.zcard(keys.dead("work")) == 1
