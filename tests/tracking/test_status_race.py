"""A tracked job's "queued" is written with its push, never after it: a fast worker's
"complete" can't be overwritten by a late "queued" (unique jobs were marked a round trip
after their push)."""

from __future__ import annotations

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters import tracking
from cogworker.adapters.jobs.enqueue import EnqueueStore, UniquePush
from tests.support.processes import CogworkerFactory, wait_until
from tests.support.topology_marks import on_both_topologies
from tests.tracking import jobs

pytestmark = on_both_topologies

APP = "tests.tracking.jobs:config"


def test_a_unique_push_marks_a_tracked_job_queued_in_the_same_script(rc: redis.Redis) -> None:
    """Pushed: queued, with the status's TTL; refused (lock held): nothing written."""
    store = EnqueueStore(rc, status_ttl=600)
    lock, other_lock = keys.unique_lock("q", "lk1"), keys.unique_lock("q", "lk3")
    pushed = UniquePush(queue="q", payload="{}", jid="j1", lock=lock, ttl=60, tracked=True)
    duplicate = UniquePush(queue="q", payload="{}", jid="j2", lock=lock, ttl=60, tracked=True)
    untracked = UniquePush(queue="q", payload="{}", jid="j3", lock=other_lock, ttl=60)
    assert store.push_unique([pushed, duplicate, untracked], 1_800_000_000.0) == [1, 0, 1]
    assert rc.hgetall(keys.status("q", "j1")) == {
        b"status": b"queued",
        b"update_time": b"1800000000.0",
    }
    assert 0 < rc.ttl(keys.status("q", "j1")) <= 600
    assert not rc.exists(keys.status("q", "j2"))
    assert not rc.exists(keys.status("q", "j3"))


def test_fast_workers_leave_every_tracked_unique_job_complete(
    client: cogworker.Client, rc: redis.Redis, cogworker_factory: CogworkerFactory, redis_url: str
) -> None:
    """300 tracked unique jobs enqueued while two workers take them at once: all complete."""
    for _ in range(2):
        cogworker_factory(APP, redis_url=redis_url, concurrency=20)
    wait_until(lambda: rc.scard(keys.PROCESSES) == 2, 20)
    jids = [
        jid for jid in client.enqueue_many(jobs.TrackedUnique, [[n] for n in range(300)]) if jid
    ]
    assert len(jids) == 300
    wait_until(lambda: int(rc.get(keys.stat("default", "processed")) or 0) == 300, 60)
    statuses = {tracking.status(rc, jid) for jid in jids}
    assert statuses == {"complete"}
