"""A periodic run as a client enqueue makes it: its class's unique lock taken, a tracked run
`queued`, and its running lock held while it waits in its queue past `periodic_lock_ttl`."""

from __future__ import annotations

import json
import time

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters import tracking
from tests.periodic import jobs_leftovers
from tests.periodic.helpers import claim_of, runs, workers_up
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.topology import plain_client
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies


def start(factory: CogworkerFactory, url: str, name: str) -> CogworkerProcess:
    """`cogworker work tests.periodic.jobs_leftovers:NAME`, once it has registered."""
    env = {"COGWORKER_TEST_REDIS_URL": url}
    worker = factory(f"tests.periodic.jobs_leftovers:{name}", redis_url=url, env=env)
    with plain_client(url, socket_timeout=10) as rc:
        workers_up(rc, 1, worker)
    return worker


def test_a_queued_run_keeps_its_running_lock_past_the_ttl_and_reads_queued(
    cogworker_factory: CogworkerFactory, redis_url: str, rc: redis.Redis
) -> None:
    """A tracked run due every second waits in a queue nobody serves, three times longer than
    `periodic_lock_ttl`: it stays the only run, holds the lock, and its status is `queued`."""
    worker = start(cogworker_factory, redis_url, "parked_every_second")
    queue = keys.queue(jobs_leftovers.PARKED_QUEUE)
    wait_until(lambda: rc.llen(queue) >= 1, 20, message=worker.log_tail)
    (raw,) = rc.lrange(queue, 0, -1)
    job = json.loads(raw)
    enqueued_at = time.time()

    ttl = jobs_leftovers.parked_every_second.periodic_lock_ttl
    wait_until(lambda: time.time() >= enqueued_at + 3 * ttl + 1, 3 * ttl + 5)
    assert rc.llen(queue) == 1, worker.log_tail()
    assert (
        rc.get(keys.periodic_running(jobs_leftovers.PARKED_QUEUE, "parked")) == job["jid"].encode()
    )
    later_tick = float(int(enqueued_at) + 2)
    assert claim_of(rc, "parked", later_tick, jobs_leftovers.PARKED_QUEUE) == "skipped"
    assert tracking.status(rc, job["jid"]) == "queued"


def test_a_unique_periodic_jobs_run_holds_its_unique_lock(
    cogworker_factory: CogworkerFactory, redis_url: str, rc: redis.Redis
) -> None:
    """While a run of an `until_executed` periodic job runs, enqueueing the same job with the
    same arguments returns None; the run carries the class's unique options."""
    worker = start(cogworker_factory, redis_url, "unique_every_second")
    first = wait_until(lambda: next(iter(runs(rc)), None), 20, message=worker.log_tail)
    client = cogworker.Client(cogworker.Config(redis_url=redis_url))
    try:
        assert client.enqueue(jobs_leftovers.UniqueSleeps, 4.0) is None
    finally:
        client.close()
    lock = next(key for key in rc.scan_iter(keys.unique_lock("*", "*")))
    assert rc.get(lock) == first.jid.encode()
