"""Long-lived threads survive what a job does to them, or take their process down whole."""

from __future__ import annotations

import time
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.worker.stopping import THREAD_DIED_EXIT
from tests.faults import jobs, jobs_liveness, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.faults.liveness_support import APP, SHORT_DRAIN_APP, THRESHOLD, identity_of
from tests.support.processes import wait_until


def push_nested(inspect: redis.Redis, depth: int, seconds: float) -> str:
    """Queue a SleepsWith job whose data is `depth` lists deep, as another producer could
    (this process's own encoder would run out of stack first); its jid."""
    jid = f"deep{depth:04d}" + "0" * 16
    now = time.time()
    nested = "[" * depth + "]" * depth
    raw = (
        f'{{"class": "tests.faults.jobs_liveness.SleepsWith", "args": [{seconds}, {nested}], '
        f'"jid": "{jid}", "queue": "default", "retry": true, '
        f'"created_at": {now}, "enqueued_at": {now}}}'
    )
    inspect.sadd(keys.QUEUES, "default")
    inspect.lpush(keys.queue("default"), raw)
    return jid


def test_the_heartbeat_outlives_jobs_it_cannot_describe(
    start_worker: StartWorker, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Jobs nested so deep that describing them for the heartbeat raises RecursionError:
    the heartbeat goes on (a quiet signal still reaches the process), no job runs twice."""
    worker = start_worker(APP)
    identity = identity_of(inspect, worker.pid)
    watcher = start_worker(APP)
    registered(inspect, 2)
    jids = [push_nested(inspect, depth, 3 * THRESHOLD) for depth in range(975, 996)]
    wait_until(lambda: inspect.llen(keys.queue("default")) == 0, 60, message=worker.log_tail)
    ProcessRegistry(inspect).send(identity, "quiet")
    wait_until(
        lambda: inspect.hget(keys.process(identity), "quiet") == b"true",
        20,
        message=worker.log_tail,
    )
    stop_all(worker, watcher)
    assert all(starts_of(oracle_file, jid) <= 1 for jid in jids)
    assert "is gone" not in watcher.log_text()
    oracle.assert_nothing_left_behind(inspect)


def test_a_dead_thread_stops_the_process_non_zero_and_requeues_its_jobs(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The poller thread ended by an exception its loop can't catch: the process stops as
    at a SIGTERM (its running job goes back to its queue) and exits with status 70."""
    worker = start_worker(SHORT_DRAIN_APP)
    registered(inspect, 1)
    running = client.enqueue(jobs.Sleep, 600.0)
    assert running is not None
    wait_until(lambda: starts_of(oracle_file, running) == 1, 20, message=worker.log_tail)
    assert client.enqueue(jobs_liveness.EndsAThread, "poller") is not None
    assert worker.wait_for_exit(30) == THREAD_DIED_EXIT
    assert "thread poller ended" in worker.log_text()
    assert inspect.llen(keys.queue("default")) == 1
    oracle.assert_each_in_one_place(inspect, [running], done=set())
    oracle.assert_nothing_left_behind(inspect)
