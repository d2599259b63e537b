"""Redis losing its data under two live workers (FLUSHALL, a restart without persistence):
the periodic schedule is put back, its runs resume, and the loss is logged once."""

from __future__ import annotations

import time

import redis

from cogworker.adapters import redis_keys as keys
from tests.periodic.helpers import entry, runs, workers_up
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.redis_server import RedisServerFactory
from tests.support.topology import plain_client
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

LOSS_WARNING = "WARNING Redis lost its data"


def start_two(factory: CogworkerFactory, url: str) -> list[CogworkerProcess]:
    """Two workers of the one-second periodic job on `url`, once both have registered."""
    env = {"COGWORKER_TEST_REDIS_URL": url}
    workers = [factory("tests.periodic.jobs:every_second", redis_url=url, env=env) for _ in "ab"]
    with plain_client(url, socket_timeout=10) as rc:
        workers_up(rc, 2, *workers)
        wait_until(lambda: runs(rc), 20, message=workers[0].log_tail)
    # Registered is not yet started: a worker writes its schedule just before it says so, and
    # a loss before that write is no loss to it (it would write the schedule afresh).
    wait_until(lambda: all("worker started" in w.log_text() for w in workers), 20)
    return workers


def resumed(rc: redis.Redis, workers: list[CogworkerProcess], after: float) -> None:
    """Wait for a run that started after `after`; then the loss has been logged exactly once."""
    wait_until(
        lambda: any(run.started > after for run in runs(rc)),
        40,
        interval=0.2,
        message=lambda: "no run after the loss:\n" + "\n".join(w.log_tail() for w in workers),
        ignore=(redis.ConnectionError,),
    )
    assert entry(rc, "tick") is not None
    wait_until(lambda: any(LOSS_WARNING in w.log_text() for w in workers), 10)
    warnings = sum(w.log_text().count(LOSS_WARNING) for w in workers)
    assert warnings == 1, "\n".join(w.log_tail() for w in workers)
    assert all(worker.is_running for worker in workers)


def test_periodic_runs_resume_after_flushall_and_the_loss_is_logged_once(
    cogworker_factory: CogworkerFactory, redis_url: str, rc: redis.Redis
) -> None:
    """FLUSHALL under two workers: the schedule comes back and the one-second job runs again."""
    workers = start_two(cogworker_factory, redis_url)
    rc.flushall()
    flushed_at = time.time()
    resumed(rc, workers, flushed_at)
    assert "flushed" in next(w.log_text() for w in workers if LOSS_WARNING in w.log_text())
    assert rc.hlen(keys.PERIODIC_SCHEDULE) == 1


def test_periodic_runs_resume_after_redis_restarts_without_persistence(
    cogworker_factory: CogworkerFactory, redis_server_factory: RedisServerFactory
) -> None:
    """A restart of a Redis without persistence: the workers put the schedule back, the job
    runs again, and the warning names the changed run_id."""
    server = redis_server_factory(appendonly=False)
    workers = start_two(cogworker_factory, server.url)
    server.restart()
    restarted_at = time.time()
    with server.client(socket_timeout=10.0) as rc:
        resumed(rc, workers, restarted_at)
    assert "run_id changed" in next(w.log_text() for w in workers if LOSS_WARNING in w.log_text())
