"""Jobs removed for good from the dashboard (delete, kill, clear, bulk) let go of their unique
lock, so the same job can be enqueued again at once; a kill runs the death handlers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
import redis

import cogworker
from cogworker import Periodic
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import encode_entry
from cogworker.app.client import build_job
from cogworker.app.periodic_runs import scheduled_entry
from cogworker.domain import payload
from tests.support.processes import CogworkerFactory, wait_until
from tests.support.sets import add_to_set
from tests.web import jobs_unique
from tests.web.helpers import Web, run_bulk, serving, token_of
from tests.web.jobs_unique import UniqueFails, UniqueReport


@pytest.fixture
def config(redis_url: str) -> cogworker.Config:
    """The dashboard's config: the test's Redis, and a death handler that records."""
    jobs_unique.DEATHS.clear()
    return cogworker.Config(
        redis_url=redis_url, heartbeat_interval=0.2, death_handlers=(jobs_unique.record_death,)
    )


def test_deleting_a_queued_unique_job_lets_go_of_its_lock(
    web: Web, enqueuer: cogworker.Client
) -> None:
    """Delete from its queue: the same job enqueues again at once (before: None for an hour)."""
    jid = enqueuer.enqueue(UniqueReport, "monday")
    assert jid is not None
    assert enqueuer.enqueue(UniqueReport, "monday") is None
    page = web.act("/queue/delete", {"name": jobs_unique.PARKED, "key": jid})
    assert "Deleted 1 job." in page.text
    assert enqueuer.enqueue(UniqueReport, "monday") is not None


def test_clearing_a_queue_lets_go_of_every_jobs_lock(
    web: Web, enqueuer: cogworker.Client, rc: redis.Redis
) -> None:
    """Clear a queue of unique jobs (more than one batch): each enqueues again, and the
    queue is unregistered."""
    days = [f"day {n}" for n in range(1_200)]
    assert all(enqueuer.enqueue_many(UniqueReport, [[day] for day in days]))
    page = web.act("/queue/clear", {"name": jobs_unique.PARKED})
    assert "Deleted 1,200 jobs." in page.text
    assert not rc.sismember(keys.QUEUES, jobs_unique.PARKED)
    assert not list(rc.scan_iter(keys.unique_lock("*", "*")))
    assert enqueuer.enqueue(UniqueReport, days[-1]) is not None


def test_deleting_a_scheduled_unique_job_in_bulk_lets_go_of_its_lock(
    web: Web, enqueuer: cogworker.Client
) -> None:
    """A bulk delete on the Scheduled page: the same job enqueues again at once."""
    assert enqueuer.enqueue_in(3600, UniqueReport, "tuesday") is not None
    progress = run_bulk(web, "scheduled", {"action": "delete", "class": "UniqueReport"})
    assert progress["done"] == 1
    assert enqueuer.enqueue(UniqueReport, "tuesday") is not None


def test_killing_a_retrying_unique_job_lets_go_and_runs_the_death_handlers(
    web: Web, enqueuer: cogworker.Client, rc: redis.Redis, cogworker_factory: CogworkerFactory,
    redis_url: str,
) -> None:  # fmt: skip
    """A real worker fails a unique job into retries (its lock extended); Kill files it in dead,
    runs the death handlers with a JobKilledError, and the same job enqueues again."""
    worker = cogworker_factory("tests.web.jobs_unique", redis_url=redis_url)
    jid = enqueuer.enqueue(UniqueFails, "friday")
    assert jid is not None
    wait_until(lambda: rc.zcard(keys.retry(jobs_unique.FAILING)) == 1, 30, message=worker.log_tail)
    worker.terminate()
    assert enqueuer.enqueue(UniqueFails, "friday") is None

    page = web.act(
        "/retries/act", {"row": f"kill:{token_of(rc, keys.retry(jobs_unique.FAILING), jid)}"}
    )
    assert "Killed 1 job." in page.text
    assert rc.zcard(keys.dead(jobs_unique.FAILING)) == 1
    [(dead_jid, error, message)] = jobs_unique.DEATHS
    assert (dead_jid, error) == (jid, "JobKilledError")
    assert "killed by hand" in message
    assert enqueuer.enqueue(UniqueFails, "friday") is not None


def test_deleting_a_queued_periodic_run_lets_go_of_its_running_lock(
    web: Web, rc: redis.Redis, config: cogworker.Config
) -> None:
    """A periodic run enqueued now and deleted from its queue: the running lock goes with it,
    so "Enqueue now" works again at once."""
    job = Periodic(cron="0 0 1 1 *", job=UniqueReport, args=["sunday"], name="report")
    rc.hset(keys.PERIODIC_SCHEDULE, "report", encode_entry(scheduled_entry(job, config, 0.0)))
    assert "Enqueued 1 job." in web.act("/periodic/enqueue", {"name": "report"}).text
    jid = rc.get(keys.periodic_running(jobs_unique.PARKED, "report"))
    assert jid is not None
    web.act("/queue/delete", {"name": jobs_unique.PARKED, "key": jid.decode()})
    assert rc.get(keys.periodic_running(jobs_unique.PARKED, "report")) is None
    assert "Enqueued 1 job." in web.act("/periodic/enqueue", {"name": "report"}).text


def test_serve_with_an_app_runs_its_death_handlers_on_kill(
    rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """`cogworker serve APP`: a Kill on the dashboard it serves runs APP's death handlers."""
    job = build_job(UniqueFails, ["saturday"], time.time())
    add_to_set(rc, keys.retry(jobs_unique.FAILING), {payload.encode(job): time.time() + 3600})
    args = ("tests.web.jobs_unique:dashboard", "--redis-url", redis_url)
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    with (
        serving(tmp_path, *args, env=env) as base,
        httpx.Client(base_url=base, timeout=5) as http,
    ):
        web = Web(http)  # type: ignore[arg-type]  # an httpx client does what Web asks
        page = web.act(
            "/retries/act",
            {"row": f"kill:{token_of(rc, keys.retry(jobs_unique.FAILING), job.jid)}"},
        )
        assert "Killed 1 job." in page.text
        assert [json.loads(raw) for raw in rc.lrange(jobs_unique.DEATHS_KEY, 0, -1)] == [
            [job.jid, "JobKilledError"]
        ]
