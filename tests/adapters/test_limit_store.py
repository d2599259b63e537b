"""Per-key limits on a real Redis: places taken up to `max` and held by jid, renewed only
while they last, let go of by the settlement that ends the run, a rate's window counting
starts, the refused jobs remembered as waiting, and what the dashboard reads of each key."""

from __future__ import annotations

import json
import time

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.limit_store import LimitStore, Spot, spot_of
from cogworker.domain.key_limits import Concurrency, Rate, claim_for
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:limits"
TWO = Concurrency(max=2)


def _spot(limit: Concurrency | Rate = TWO, key: str = "k") -> Spot:
    return spot_of("default", claim_for(limit, "app.Fetch", key), limit)


def _redis_ms(rc: redis.Redis) -> int:
    seconds, micros = rc.time()
    return seconds * 1000 + micros // 1000


def test_a_concurrency_limit_gives_max_places_each_held_once_by_its_jid(rc: redis.Redis) -> None:
    """Two places: a third jid is refused (and noted waiting), a holder taking again keeps
    its one place, and a place let go of is free for the waiting jid, which leaves waiting."""
    store, spot = LimitStore(rc), _spot()
    assert store.take(spot, "a", 60, time.time()) == (True, 0.0)
    assert store.take(spot, "b", 60, time.time()) == (True, 0.0)
    assert store.take(spot, "a", 60, time.time()) == (True, 0.0)  # a recovered run
    assert store.take(spot, "c", 60, time.time()) == (False, 0.0)
    assert set(rc.zrange(spot.holders_key(), 0, -1)) == {b"a", b"b"}
    assert rc.zrange(spot.waiting_key(), 0, -1) == [b"c"]
    store.release({spot.holders_key(): ["a"]})
    assert store.take(spot, "c", 60, time.time()) == (True, 0.0)
    assert rc.zcard(spot.waiting_key()) == 0


def test_a_place_runs_out_unless_renewed_and_is_not_renewed_once_out(rc: redis.Redis) -> None:
    """A place lasts its TTL from its take or its last renewal (Redis's clock); one that ran
    out is not brought back by a late renewal, and its place is taken by another."""
    store, spot = LimitStore(rc), _spot(Concurrency(max=1))
    store.take(spot, "a", 0.2, time.time())
    before = _redis_ms(rc)
    store.renew({spot.holders_key(): ["a"]}, 60)
    assert rc.zscore(spot.holders_key(), "a") >= before + 60_000
    store.renew({spot.holders_key(): ["a"]}, 0.05)
    time.sleep(0.1)
    store.renew({spot.holders_key(): ["a", "never-held"]}, 60)
    assert rc.zscore(spot.holders_key(), "never-held") is None
    assert store.take(spot, "b", 60, time.time()) == (True, 0.0)
    assert rc.zrange(spot.holders_key(), 0, -1) == [b"b"]


def test_a_rate_limit_counts_starts_in_its_window_and_says_when_one_frees(
    rc: redis.Redis,
) -> None:
    """Three starts per 10 s: a job starting again counts again, the fourth start is refused
    with the wait until the oldest leaves the window."""
    rate = Rate(max=3, per=10)
    store, spot = LimitStore(rc), _spot(rate)
    for jid in ("a", "b", "a"):
        assert store.take(spot, jid, 60, time.time()) == (True, 0.0)
    taken, free_in = store.take(spot, "c", 60, time.time())
    assert not taken
    assert 9.0 < free_in <= 10.0
    assert 9_000 < rc.pttl(spot.holders_key()) <= 10_000


def test_a_settlement_lets_go_of_its_runs_place_in_its_script(rc: redis.Redis) -> None:
    """An ack and a retry naming the run's place remove the jid from it, in the batch of acks
    as alone; another jid's place stays."""
    store, spot, settles = LimitStore(rc), _spot(Concurrency(max=5)), SettleStore(rc)
    for jid in ("a", "b", "other"):
        store.take(spot, jid, 60, time.time())
    orders = []
    for jid in ("a", "b"):
        raw = json.dumps({"class": "app.Fetch", "jid": jid, "queue": "default"}).encode()
        rc.lpush(keys.in_progress("default", IDENTITY), raw)
        kind = "ack" if jid == "a" else "retry"
        outcome = OutcomeRecord(
            kind=kind, jid=jid, class_name="app.Fetch", score=time.time(), payload="{}",
            limit_place=spot.holders_key(),
        )  # fmt: skip
        orders.append(SettleOrder(fetched=Fetched(queue="default", raw=raw), outcome=outcome))
    assert settles.settle_many(IDENTITY, orders, time.time()) == [True, True]
    assert rc.zrange(spot.holders_key(), 0, -1) == [b"other"]


def test_the_dashboard_reads_each_key_used_lately(rc: redis.Redis) -> None:
    """Every key a store took on is listed once with its numbers, holders and waiting jobs;
    a registry entry this release can't read is passed over."""
    store = LimitStore(rc)
    one, other = _spot(Concurrency(max=1), "k1"), _spot(Rate(max=1, per=60), "k2")
    store.take(one, "a", 60, time.time())
    store.take(one, "b", 60, time.time())
    store.take(other, "c", 60, time.time())
    store.take(other, "d", 60, time.time())
    rc.zadd(keys.LIMITS, {"not json": time.time(), '{"queue": 1}': time.time()})
    uses = {use.spot.key: use for use in store.uses()}
    assert set(uses) == {"k1", "k2"}
    concurrency, rate = uses["k1"], uses["k2"]
    assert (concurrency.used, concurrency.spot.max, concurrency.waiting) == (1, 1, 1)
    assert [jid for jid, _ in concurrency.holders] == ["a"]
    assert concurrency.waiting_jids == ("b",)
    assert (rate.used, rate.spot.per, rate.waiting_jids, rate.holders) == (1, 60.0, ("d",), ())


def test_a_store_registers_a_key_once_a_minute(rc: redis.Redis) -> None:
    """The registry entry is written with a store's first take on a key, not with each."""
    store, spot = LimitStore(rc), _spot()
    store.take(spot, "a", 60, 1000.0)
    rc.delete(keys.LIMITS)
    store.take(spot, "b", 60, 1030.0)
    assert rc.zcard(keys.LIMITS) == 0
    store.take(spot, "c", 60, 1061.0)
    assert rc.zcard(keys.LIMITS) == 1
