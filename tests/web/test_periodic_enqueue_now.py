"""The Periodic page's "Enqueue now" goes as a tick's run does: through the client middleware,
with the class's options, and never while the job's previous run is queued or running."""

from __future__ import annotations

import json
import time

import pytest
import redis

import cogworker
from cogworker import Periodic
from cogworker.adapters import redis_keys as keys
from cogworker.adapters import tracking
from cogworker.adapters.periodic_store import encode_entry
from cogworker.app.periodic_runs import scheduled_entry
from tests.periodic import jobs_leftovers
from tests.periodic.helpers import runs, workers_up
from tests.support.processes import CogworkerFactory, wait_until
from tests.web.helpers import Web


@pytest.fixture
def config(redis_url: str) -> cogworker.Config:
    """The dashboard's config: the test's Redis, and a client middleware that records."""
    return cogworker.Config(
        redis_url=redis_url,
        heartbeat_interval=0.2,
        client_middleware=(jobs_leftovers.record_pushes,),
    )


def test_enqueue_now_while_a_run_runs_starts_no_second_run(
    web: Web, rc: redis.Redis, cogworker_factory: CogworkerFactory, redis_url: str
) -> None:
    """A real worker runs a long periodic job: "Enqueue now" says why it enqueued nothing, and
    the run in flight stays the only one."""
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    worker = cogworker_factory("tests.periodic.jobs:hanging", redis_url=redis_url, env=env)
    workers_up(rc, 1, worker)
    first = wait_until(lambda: next(iter(runs(rc)), None), 20, message=worker.log_tail)

    done = web.act("/periodic/enqueue", {"name": "hang"})
    assert "Not enqueued: its previous run is still queued or running" in done.text
    assert rc.llen(keys.queue("default")) == 0
    assert rc.get(keys.periodic_running("default", "hang")) == first.jid.encode()
    assert [run.jid for run in runs(rc)] == [first.jid]


def test_enqueue_now_goes_through_the_client_middleware_with_the_class_options(
    web: Web, rc: redis.Redis, config: cogworker.Config
) -> None:
    """The run passes the client middleware, is tracked as `queued` and holds the running lock;
    a second "Enqueue now" while it waits is refused."""
    jobs_leftovers.SEEN.clear()
    job = Periodic(cron="0 0 1 1 *", job=jobs_leftovers.Parked, name="parked")
    rc.hset(
        keys.PERIODIC_SCHEDULE, "parked", encode_entry(scheduled_entry(job, config, time.time()))
    )

    assert "Enqueued 1 job." in web.act("/periodic/enqueue", {"name": "parked"}).text
    (raw,) = rc.lrange(keys.queue(jobs_leftovers.PARKED_QUEUE), 0, -1)
    queued = json.loads(raw)
    assert [seen.jid for seen in jobs_leftovers.SEEN] == [queued["jid"]]
    assert queued["seen_by"] == "record_pushes"
    assert queued["periodic"] == "parked"
    assert tracking.status(rc, queued["jid"]) == "queued"
    lock = keys.periodic_running(jobs_leftovers.PARKED_QUEUE, "parked")
    assert rc.get(lock) == queued["jid"].encode()

    again = web.act("/periodic/enqueue", {"name": "parked"})
    assert "Not enqueued" in again.text
    assert rc.llen(keys.queue(jobs_leftovers.PARKED_QUEUE)) == 1


def test_enqueue_now_of_a_unique_job_respects_its_unique_lock(
    web: Web, rc: redis.Redis, config: cogworker.Config, enqueuer: cogworker.Client
) -> None:
    """While a job with the same unique lock waits, "Enqueue now" passes the client middleware
    but enqueues nothing and says why; once that job is deleted, it enqueues the run."""
    jobs_leftovers.SEEN.clear()
    job = Periodic(cron="0 0 1 1 *", job=jobs_leftovers.UniqueSleeps, args=[4.0], name="unique")
    rc.hset(
        keys.PERIODIC_SCHEDULE, "unique", encode_entry(scheduled_entry(job, config, time.time()))
    )
    holder = enqueuer.enqueue(jobs_leftovers.UniqueSleeps, 4.0)
    assert holder is not None

    refused = web.act("/periodic/enqueue", {"name": "unique"})
    assert "Not enqueued: another job holds its unique lock." in refused.text
    assert [seen.extra.get("periodic") for seen in jobs_leftovers.SEEN] == ["unique"]
    assert [json.loads(raw)["jid"] for raw in rc.lrange(keys.queue("default"), 0, -1)] == [holder]
    assert rc.get(keys.periodic_running("default", "unique")) is None

    deleted = web.act("/queue/delete", {"name": "default", "key": holder})
    assert "Deleted 1 job." in deleted.text
    assert "Enqueued 1 job." in web.act("/periodic/enqueue", {"name": "unique"}).text
    (raw,) = rc.lrange(keys.queue("default"), 0, -1)
    run = json.loads(raw)
    assert (run["periodic"], run["seen_by"]) == ("unique", "record_pushes")
    assert rc.get(run["unique_lock"]) == run["jid"].encode()
    assert len(jobs_leftovers.SEEN) == 2
