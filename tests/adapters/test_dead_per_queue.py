"""`dead_max_jobs` caps each queue's dead set (layout step 8): jobs dying on one queue never
push another queue's dead jobs out; `dead_max_age` still drops the old ones."""

from __future__ import annotations

import json

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:trim"
NOW = 1_800_000_000.0


def _die(store: SettleStore, rc: redis.Redis, queue: str, jid: str, at: float) -> None:
    raw = json.dumps({"class": "app.Send", "args": [], "jid": jid, "queue": queue}).encode()
    rc.lpush(keys.in_progress(queue, IDENTITY), raw)
    outcome = OutcomeRecord(kind="dead", jid=jid, score=at, payload=raw.decode(), attempt="{}")
    assert store.settle(
        IDENTITY, SettleOrder(fetched=Fetched(queue=queue, raw=raw), outcome=outcome), at
    )


def test_each_queue_keeps_its_newest_dead_jobs_up_to_the_cap(rc: redis.Redis) -> None:
    """A cap of 3: a busy queue's five deaths keep its newest three, and a quiet queue's
    two dead jobs, older than all of them, stay; one older than `dead_max_age` goes."""
    store = SettleStore(rc, retention=Retention(dead_max_jobs=3, dead_max_age=3600))
    _die(store, rc, "quiet", "q-expired", NOW - 7200)
    _die(store, rc, "quiet", "q0", NOW - 100)
    _die(store, rc, "quiet", "q1", NOW - 90)
    for n in range(5):
        _die(store, rc, "busy", f"b{n}", NOW + n)

    def dead(queue: str) -> list[str]:
        return [json.loads(entry)["jid"] for entry in rc.zrange(keys.dead(queue), 0, -1)]

    assert dead("busy") == ["b2", "b3", "b4"]
    assert dead("quiet") == ["q0", "q1"]
