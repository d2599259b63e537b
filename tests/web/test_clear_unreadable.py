"""Clearing a queue that holds an entry which isn't a job: the entry goes with the rest, its
placeholders named in the queue's slot (a cluster refused the clear with CROSSSLOT when the
unreadable entry's placeholders fell in the slot of the empty queue name)."""

from __future__ import annotations

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.app.web.removal import clear_queue
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies


def test_clearing_a_queue_takes_off_an_entry_that_is_not_a_job(rc: redis.Redis) -> None:
    """A job and a non-JSON entry on `work`: both deleted, the queue unregistered."""
    job = payload.encode(JobRecord(class_name="app.Work", queue="work", jid="j1"))
    rc.sadd(keys.QUEUES, "work")
    rc.lpush(keys.queue("work"), job, b"not a job")
    assert clear_queue(QueueStore(rc), "work") == 2
    assert rc.llen(keys.queue("work")) == 0
    assert not rc.sismember(keys.QUEUES, "work")
