"""A class's run history: each queue keeps its share in its slot, written by the settling
scripts; a reading merges the shares of every part and of the migrated part, newest first."""

from __future__ import annotations

import redis
from redis.crc import key_slot

from cogworker import tracking
from cogworker.adapters import parts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain.records import RunRecord, to_json
from tests.tracking.test_tracking import CountingConnection

IDENTITY = "host:1:history"
NOW = 1_800_000_000.0
CLASS = "app.Send"


def _run(jid: str, queue: str, ended_at: float) -> RunRecord:
    return RunRecord(jid=jid, class_name=CLASS, queue=queue, started_at=ended_at - 1,
                     ended_at=ended_at, outcome="success", process=IDENTITY)  # fmt: skip


def _settle(rc: redis.Redis, runs: list[RunRecord]) -> None:
    """Each run settled as a plain ack (its queue's `ack_many`), in one batch."""
    orders = []
    for run in runs:
        raw = f'{{"jid":"{run.jid}","class":"{CLASS}","queue":"{run.queue}"}}'.encode()
        rc.lpush(keys.in_progress(run.queue, IDENTITY), raw)
        outcome = OutcomeRecord(kind="ack", jid=run.jid, class_name=CLASS,
                                history=to_json(run), history_per_job=False)  # fmt: skip
        orders.append(SettleOrder(fetched=Fetched(queue=run.queue, raw=raw), outcome=outcome))
    assert SettleStore(rc).settle_many(IDENTITY, orders, NOW) == [True] * len(orders)


def test_each_queue_keeps_its_runs_in_its_slot_and_a_reading_merges_them(
    rc: redis.Redis,
) -> None:
    """Runs of two queues (one named with a tag) settled interleaved, and the history a
    migration kept for all queues: each queue's list in its slot holds its own, and the
    reading gives every run, newest first."""
    runs = [_run(f"j{n}", queue, NOW - 100 + n) for n, queue in enumerate(["mail", "a{b}"] * 3)]
    _settle(rc, runs)
    migrated = [_run("old1", "mail", NOW - 200), _run("old0", "heavy", NOW - 300)]
    rc.rpush(keys.class_history(parts.MIGRATED, CLASS), *map(to_json, migrated))

    for queue in ("mail", "a{b}"):
        history = keys.class_history(queue, CLASS)
        assert key_slot(history.encode()) == key_slot(keys.queue(queue).encode())
        assert rc.lrange(history, 0, -1) == [to_json(run).encode() for run in runs[::-1]
                                              if run.queue == queue]  # fmt: skip
    assert tracking.class_history(rc, CLASS) == [*runs[::-1], *migrated]


def test_a_reading_keeps_the_newest_runs_of_all_queues_up_to_its_limit(
    rc: redis.Redis, redis_url: str
) -> None:
    """Three queues' runs, one queue's all newer than the others': the limit's newest of
    them all, read in two round trips (the parts, then an LRANGE per queue)."""
    runs = [_run(f"r{n}", "reports", NOW + n) for n in range(4)]
    runs += [_run(f"m{n}", queue, NOW - 10 + n) for n, queue in enumerate(["mail", "low"] * 2)]
    _settle(rc, runs)
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    client.ping()
    CountingConnection.sent = 0

    newest = tracking.class_history(client, CLASS, limit=5)

    assert CountingConnection.sent == 2
    assert [run.jid for run in newest] == ["r3", "r2", "r1", "r0", "m3"]
    assert tracking.class_history(rc, "app.Other") == []
