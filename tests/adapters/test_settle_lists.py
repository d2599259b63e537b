"""A settled failure's records on a real Redis: a job's attempts, its history and its
class's history each keep their newest records up to their cap, with their TTL set, and
a list still short is left untrimmed (settle.lua trims only past the cap)."""

from __future__ import annotations

import redis

from cogworker.adapters import jid_index, job_records, parts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:lists"
NOW = 1_800_000_000.0
KEPT = Retention(attempts_kept=3, history_per_job=2, history_per_class=4, history_ttl=600)


def _retry(rc: redis.Redis, store: SettleStore, n: int) -> bool:
    """Settle the `n`th failure of job j1 (class app.Fail) as a retry."""
    raw = f'{{"class": "app.Fail", "args": [], "jid": "j1", "n": {n}}}'.encode()
    rc.lpush(keys.in_progress("work", IDENTITY), raw)
    outcome = OutcomeRecord(
        kind="retry",
        jid="j1",
        class_name="app.Fail",
        score=NOW + 60,
        payload=raw.decode(),
        attempt=f'{{"attempt": {n}}}',
        history=f'{{"run": {n}}}',
    )
    order = SettleOrder(fetched=Fetched(queue="work", raw=raw), outcome=outcome)
    return store.settle(IDENTITY, order, NOW)


def test_each_list_keeps_its_newest_records_up_to_its_cap(rc: redis.Redis) -> None:
    """Two failures leave every list whole; six leave each its newest, capped, with a TTL."""
    store = SettleStore(rc, retention=KEPT)
    assert all(_retry(rc, store, n) for n in range(2))
    assert rc.lrange(keys.job_attempts("work", "j1"), 0, -1) == [
        b'{"attempt": 1}',
        b'{"attempt": 0}',
    ]
    assert all(_retry(rc, store, n) for n in range(2, 6))
    assert rc.lrange(keys.job_attempts("work", "j1"), 0, -1) == [
        f'{{"attempt": {n}}}'.encode() for n in (5, 4, 3)
    ]
    assert rc.lrange(keys.history("work", "j1"), 0, -1) == [b'{"run": 5}', b'{"run": 4}']
    assert rc.lrange(keys.class_history("work", "app.Fail"), 0, -1) == [
        f'{{"run": {n}}}'.encode() for n in (5, 4, 3, 2)
    ]
    assert 0 < rc.ttl(keys.job_attempts("work", "j1")) <= KEPT.attempts_ttl
    for history in (keys.history("work", "j1"), keys.class_history("work", "app.Fail")):
        assert 0 < rc.ttl(history) <= KEPT.history_ttl
    assert rc.zcard(keys.retry("work")) == 6


def test_a_settlement_writing_a_job_s_records_indexes_them_in_its_queue(rc: redis.Redis) -> None:
    """The records go to the slot of the queue the job was fetched from, its jid index
    entry names it (for its records, not a result: a waiter isn't sent there) for as long
    as the longest of them lasts, and the readers by jid find them through it."""
    store = SettleStore(rc, retention=KEPT)
    assert _retry(rc, store, 0)

    assert jid_index.indexed(rc, "j1") == "work"
    assert jid_index.indexed(rc, "j1", result=True) is None
    assert KEPT.history_ttl < rc.ttl(keys.jid_index("j1")) <= KEPT.attempts_ttl
    assert job_records.holders(rc, "j1") == ("work", parts.MIGRATED)
    rc.delete(keys.jid_index("j1"))  # lost: the probe over the registered queues finds it
    rc.sadd(keys.QUEUES, "another")
    assert job_records.holders(rc, "j1") == ("work", parts.MIGRATED)
