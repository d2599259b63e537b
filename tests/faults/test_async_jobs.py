"""Async jobs (`async def perform`) on a real worker: they overlap on the process's event
loop, fail and retry like sync jobs, go back to their queue when a stop cuts them off, and a
job that blocks the loop is named in the log."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs, jobs_async, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.processes import wait_until

APP = "tests.faults.jobs_async:async_config"


def test_async_jobs_overlap_on_one_loop_and_each_runs_once(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """40 sleeping async jobs on a worker of 4 threads: more than 4 run at once, all once."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jids = [jid for jid in client.enqueue_many(jobs_async.AsyncSleep, [[0.5]] * 40) if jid]
    wait_until(lambda: set(jids) <= oracle.finished(oracle_file), 30, message=worker.log_tail)
    stop_all(worker)
    assert int(inspect.get("async:most") or 0) > jobs.config.concurrency
    assert {starts_of(oracle_file, jid) for jid in jids} == {1}
    assert int(inspect.get(keys.stat("default", "processed")) or 0) == 40
    oracle.assert_nothing_left_behind(inspect)


def test_a_stopped_worker_leaves_no_task_pending_on_its_loop(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """A clean stop after an async job: asyncio reports no task destroyed while pending."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jid = client.enqueue(jobs_async.AsyncSleep, 0.0)
    wait_until(lambda: jid in oracle.finished(oracle_file), 20, message=worker.log_tail)
    stop_all(worker)
    assert "Task was destroyed but it is pending" not in worker.log_text(), worker.log_tail()


def test_an_async_failure_is_retried_or_killed_by_its_async_hooks(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The async retry_in is awaited (1,000 s or KILL); KILL files it dead and the async
    retries_exhausted runs."""
    worker = start_worker(APP)
    registered(inspect, 1)
    retried = client.enqueue(jobs_async.AsyncFails, False)
    killed = client.enqueue(jobs_async.AsyncFails, True)
    wait_until(
        lambda: inspect.zcard(keys.retry("default")) == inspect.zcard(keys.dead("default")) == 1,
        30,
        message=worker.log_tail,
    )
    wait_until(lambda: inspect.lrange("async:exhausted", 0, -1) == [str(killed).encode()], 20)
    stop_all(worker)
    [(entry, score)] = inspect.zrange(keys.retry("default"), 0, -1, withscores=True)
    job = json.loads(entry)
    assert job["jid"] == retried
    assert job["error_class"] == "ValueError"
    assert score - job["failed_at"] > 990  # the hook's 1,000 s, not the default backoff
    [dead] = inspect.zrange(keys.dead("default"), 0, -1)
    assert json.loads(dead)["jid"] == killed
    attempts = [
        json.loads(a) for a in inspect.lrange(keys.job_attempts("default", str(killed)), 0, -1)
    ]
    assert [a["outcome"] for a in attempts] == ["killed"]


def test_a_stop_cancels_async_jobs_past_the_timeout_and_hands_them_back(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """SIGTERM while async jobs wait on a gate past shutdown_timeout: cancelled, back at the
    front of their queue, counted as handed back; a new worker runs each once more."""
    gate = oracle_file.parent / "gate"
    first = start_worker(APP)
    registered(inspect, 1)
    jids = [jid for jid in client.enqueue_many(jobs_async.AwaitsAGate, [[str(gate)]] * 6) if jid]
    wait_until(lambda: all(starts_of(oracle_file, j) == 1 for j in jids), 20, message="started")
    first.send_signal(signal.SIGTERM)
    assert first.wait_for_exit(20) == 0, first.log_tail()
    assert inspect.llen(keys.queue("default")) == 6
    assert all(inspect.get(keys.handbacks("default", jid)) == b"1" for jid in jids)
    oracle.assert_nothing_left_behind(inspect)
    gate.touch()
    second = start_worker(APP)
    wait_until(lambda: set(jids) <= oracle.finished(oracle_file), 30, message=second.log_tail)
    stop_all(second)
    assert {starts_of(oracle_file, jid) for jid in jids} == {2}
    oracle.assert_each_in_one_place(inspect, jids, done=set(jids))


def test_a_job_blocking_the_loop_is_named_in_the_log(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """time.sleep inside an async def: a warning names the job; the job still completes."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jid = client.enqueue(jobs_async.BlocksTheLoop, 1.5)
    wait_until(lambda: jid in oracle.finished(oracle_file), 20, message=worker.log_tail)
    wait_until(lambda: "event loop has been blocked" in worker.log_text(), 10,
               message=worker.log_tail)  # fmt: skip
    stop_all(worker)
    blocked = [line for line in worker.log_text().splitlines() if "blocked for" in line]
    assert any(f"BlocksTheLoop {jid}" in line for line in blocked), blocked


def test_sync_and_async_middleware_wrap_an_async_job(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The sync layer outside, the async one inside it, which passes other arguments on."""
    worker = start_worker("tests.faults.jobs_async:layered_config")
    registered(inspect, 1)
    jid = client.enqueue(jobs_async.AsyncSleep, 30.0)  # the async layer makes it 0.01 s
    wait_until(lambda: jid in oracle.finished(oracle_file), 20, message=worker.log_tail)
    stop_all(worker)
    layers = [b.decode() for b in inspect.lrange(f"layers:{jid}", 0, -1)]
    assert layers == ["sync-in", "async-in", "async-out", "sync-out"]


def test_a_worker_without_a_loop_fails_an_async_job_saying_why(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """async_concurrency=0: the run fails (never 'succeeds'), its error naming the setting."""
    worker = start_worker("tests.faults.jobs_async:no_async_config")
    registered(inspect, 1)
    jid = client.enqueue(jobs_async.AsyncSleep, 0.0)
    wait_until(lambda: inspect.zcard(keys.retry("default")) == 1, 20, message=worker.log_tail)
    stop_all(worker)
    entry = json.loads(inspect.zrange(keys.retry("default"), 0, -1)[0])
    assert entry["jid"] == jid
    assert "async_concurrency=0" in entry["error_message"]
    assert starts_of(oracle_file, str(jid)) == 0
