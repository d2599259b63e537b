"""A batch's plain retries of one queue are filed by one `retry_many` call, writing exactly
what settling each alone writes."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.results import Kept

IDENTITY = "host:1:retries"
NOW = 1_800_000_000.5
#: Short lists, so that every trim (the job's attempts and history, its class's) runs.
KEPT = Retention(attempts_kept=2, history_per_job=2, history_per_class=3)


def _raw(queue: str, jid: str) -> bytes:
    return f'{{"jid":"{jid}","class":"app.Flaky","queue":"{queue}"}}'.encode()


def _retry(queue: str, jid: str, n: int, **fields: Any) -> SettleOrder:
    """A retry of `jid` on `queue`, as a failed run's settlement makes one."""
    made: dict[str, Any] = {
        "payload": _raw(queue, jid).decode().replace("}", f',"retry_count":{n}}}'),
        "attempt": f'{{"n":{n}}}',
        "history": f'{{"run":{n}}}',
        "sample": RunSample(queue=queue, micros=1_000 * n, failed=True),
        "class_name": "app.Flaky",
    }
    outcome = OutcomeRecord(kind="retry", jid=jid, score=NOW + 30 + n, **(made | fields))
    return SettleOrder(fetched=Fetched(queue=queue, raw=_raw(queue, jid)), outcome=outcome)


def _batch() -> list[SettleOrder]:
    """Plain retries of two queues, one holding a limit place, one writing no run of its
    own; between them what isn't plain: a tracked retry, one keeping a result, a death (of
    another class: a class's history holds a batch's runs grouped by the call writing them)."""
    return [
        _retry("mail", "j0", 0),
        _retry("mail", "j1", 1, limit_place=keys.no_lock("mail") + ":holders"),
        _retry("a{b}", "j2", 2),
        _retry("mail", "j3", 3, status="retrying", class_name="app.Other"),
        _retry("mail", "j4", 4, history_per_job=False, sample=None, attempt=""),
        _retry(
            "a{b}",
            "j5",
            5,
            class_name="app.Other",
            result=Kept(queue="a{b}", record=None, keep=60, index_ttl=60),
        ),
        SettleOrder(
            fetched=Fetched(queue="mail", raw=_raw("mail", "j6")),
            outcome=OutcomeRecord(kind="dead", jid="j6", score=NOW, payload="{}"),
        ),
        _retry("mail", "j7", 7),
    ]


def _hold(rc: redis.Redis, orders: list[SettleOrder], identity: str | None) -> None:
    """Put `orders`' jobs where a worker holds them, with what their settlement replaces."""
    rc.flushall()
    for order in orders:
        queue, jid = order.fetched.queue, order.outcome.jid
        if identity is not None:
            rc.lpush(keys.in_progress(queue, identity), order.fetched.raw)
        rc.set(keys.orphanings(queue, jid), 1)
        rc.set(keys.handbacks(queue, jid), 1)
        rc.lpush(keys.job_attempts(queue, jid), "old1", "old2")
        rc.lpush(keys.history(queue, jid), "old1", "old2")
        rc.lpush(keys.class_history(queue, "app.Flaky"), "older")
        rc.zadd(keys.no_lock(queue) + ":holders", {jid: 1})


def _contents(rc: redis.Redis) -> dict[bytes, tuple[object, bool]]:
    """Every key: its value, and whether it expires."""
    read = {
        b"string": rc.get,
        b"list": lambda key: rc.lrange(key, 0, -1),
        b"hash": rc.hgetall,
        b"zset": lambda key: rc.zrange(key, 0, -1, withscores=True),
        b"set": rc.smembers,
    }
    return {key: (read[rc.type(key)](key), rc.ttl(key) > 0) for key in rc.scan_iter()}


@pytest.mark.parametrize("identity", [IDENTITY, None], ids=["reliable", "basic"])
def test_a_batch_writes_what_settling_each_alone_writes(
    rc: redis.Redis, identity: str | None
) -> None:
    """The same outcomes settled one by one (settle.lua each) and as one batch leave every
    key alike: the retry sets, the jid indexes, counters, attempts, histories (trimmed),
    metrics, limit places; the batch's plain retries take one call per queue."""
    orders = _batch()
    _hold(rc, orders, identity)
    alone = SettleStore(rc, KEPT)
    assert [alone.settle(identity, order, NOW) for order in orders] == [True] * len(orders)
    settled_alone = _contents(rc)

    _hold(rc, orders, identity)
    rc.config_resetstat()
    assert SettleStore(rc, KEPT).settle_many(identity, orders, NOW) == [True] * len(orders)

    assert _contents(rc) == settled_alone
    evalsha = rc.info("commandstats")["cmdstat_evalsha"]
    # A retry_many per queue and a settle for each of the three others (a script Redis
    # doesn't hold yet fails once with NOSCRIPT and is sent again: a failed call).
    assert evalsha["calls"] - evalsha["failed_calls"] == 2 + 3
    assert rc.zcard(keys.retry("mail")) == 5
    assert rc.llen(keys.class_history("mail", "app.Flaky")) == 3


def test_a_retry_no_longer_held_is_neither_filed_nor_counted_and_a_repeat_writes_nothing(
    rc: redis.Redis,
) -> None:
    """One retry another process recovered meanwhile: False at its place, nothing of it
    written; the batch sent again (its reply lost) finds none of them and counts nothing."""
    orders = [_retry("mail", f"j{n}", n) for n in range(3)]
    _hold(rc, orders, IDENTITY)
    rc.lrem(keys.in_progress("mail", IDENTITY), 1, orders[1].fetched.raw)
    store = SettleStore(rc, KEPT)

    assert store.settle_many(IDENTITY, orders, NOW) == [True, False, True]
    assert store.settle_many(IDENTITY, orders, NOW) == [False, False, False]

    assert [rc.get(keys.stat("mail", name)) for name in ("processed", "failed")] == [b"2"] * 2
    filed = dict(rc.zrange(keys.retry("mail"), 0, -1, withscores=True))
    payloads = [order.outcome.payload.encode() for order in orders]
    assert filed == {payloads[0]: NOW + 30, payloads[2]: NOW + 32}
    assert set(rc.hgetall(keys.located("mail"))) == {b"j0", b"j2"}
    assert rc.exists(keys.orphanings("mail", "j1"))
    assert rc.lrange(keys.job_attempts("mail", "j1"), 0, -1) == [b"old2", b"old1"]
