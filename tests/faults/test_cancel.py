"""Cancel on real workers: a waiting job is taken off (never run, its lock let go of), a
running one is stopped (sync: JobCancelledError in its thread; async: its task cancelled)
and ends as cancelled, never retried; a cancel racing the run's end records one outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.cancelling import CancelResult
from tests.faults import jobs, jobs_limits, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.faults.jobs_async import async_config
from tests.support.clients import EitherClient
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

ASYNC_APP = "tests.faults.jobs_async:async_config"
assert async_config.async_concurrency > 0


def attempt_outcomes(inspect: redis.Redis, jid: str) -> list[str]:
    """The outcomes on `jid`'s attempt timeline, newest first."""
    return [
        json.loads(a)["outcome"] for a in inspect.lrange(keys.job_attempts("default", jid), 0, -1)
    ]


@on_both_topologies
def test_waiting_jobs_are_removed_and_never_run(
    start_worker: StartWorker, either_client: EitherClient, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Queued and scheduled jobs, cancelled through either client: removed, status and
    timeline say cancelled, the unique lock is let go of (the same job can be enqueued
    again), and a worker never runs them."""
    client = either_client
    queued = str(client.enqueue(jobs_limits.TrackedCount, 1))
    scheduled = str(client.enqueue_in(0.5, jobs_limits.TrackedCount, 2))
    assert client.cancel(queued) is CancelResult.REMOVED
    assert client.cancel(scheduled) is CancelResult.REMOVED
    assert client.cancel(queued) is CancelResult.ALREADY_FINISHED
    assert client.cancel("no-such-job") is CancelResult.NOT_FOUND
    with pytest.raises(ValueError, match="jid"):
        client.cancel("not a jid!")
    for jid in (queued, scheduled):
        assert client.status(jid) == "cancelled"
        assert attempt_outcomes(inspect, jid) == ["cancelled"]
    assert not inspect.keys(keys.unique_lock("*", "*"))
    again = str(client.enqueue(jobs_limits.TrackedCount, 1))
    worker = start_worker()
    registered(inspect, 1)
    wait_until(lambda: client.status(again) == "complete", 20, message=worker.log_tail)
    stop_all(worker)
    assert oracle.runs(oracle_file)[0] == {again: 1}
    assert inspect.get(keys.stat("default", "cancelled")) == b"2"
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
@pytest.mark.parametrize("app", ["tests.faults.jobs:config", ASYNC_APP])
def test_a_running_job_is_stopped_and_ends_cancelled(
    start_worker: StartWorker,
    either_client: EitherClient,
    inspect: redis.Redis,
    oracle_file: Path,
    app: str,
) -> None:
    """A sync job looping in Python, or an async one awaiting, cancelled through either
    client: signalled, it ends as cancelled (status, timeline, counter), not retried, no
    death; the worker goes on."""
    client = either_client
    worker = start_worker(app)
    registered(inspect, 1)
    if app == ASYNC_APP:
        jid = str(client.enqueue(jobs_limits.AsyncAwaitsForever))
    else:
        jid = str(client.enqueue(jobs_limits.LoopsUntilCancelled, str(oracle_file) + ".gate"))
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=worker.log_tail)
    assert client.cancel(jid) is CancelResult.SIGNALLED
    wait_until(lambda: client.status(jid) == "cancelled", 20, message=worker.log_tail)
    after = str(client.enqueue(jobs.Count, 1))
    wait_until(lambda: after in oracle.finished(oracle_file), 20, message=worker.log_tail)
    stop_all(worker)
    assert jid not in oracle.finished(oracle_file)
    assert attempt_outcomes(inspect, jid) == ["cancelled"]
    assert inspect.zcard(keys.retry("default")) == inspect.zcard(keys.dead("default")) == 0
    assert inspect.get(keys.stat("default", "cancelled")) == b"1"
    assert client.cancel(jid) is CancelResult.ALREADY_FINISHED
    if app != ASYNC_APP:
        assert inspect.get("saw-cancelled") == jid.encode()  # self.cancelled said so
    assert not inspect.keys(keys.unique_lock("*", "*"))
    oracle.assert_nothing_left_behind(inspect)


def test_a_cancel_racing_the_runs_end_records_exactly_one_outcome(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """200 short jobs across two workers, each cancelled as it may be starting or ending:
    every job ends exactly once, complete or cancelled, and runs at most once."""
    workers = [start_worker(), start_worker()]
    registered(inspect, 2)
    jids = [
        str(jid) for jid in client.enqueue_many(jobs_limits.TrackedQuick, [[n] for n in range(200)])
    ]
    results = {jid: client.cancel(jid) for jid in jids}
    wait_until(
        lambda: all(client.status(jid) in ("complete", "cancelled") for jid in jids),
        60,
        message=lambda: str(
            {
                jid: (client.status(jid), results[jid])
                for jid in jids
                if client.status(jid) not in ("complete", "cancelled")
            }
        ),
    )
    stop_all(*workers)
    statuses = {jid: client.status(jid) for jid in jids}
    starts = oracle.runs(oracle_file)[0]
    assert all(starts[jid] <= 1 for jid in jids)
    cancelled = [jid for jid in jids if statuses[jid] == "cancelled"]
    for jid in jids:
        outcomes = attempt_outcomes(inspect, jid)
        assert outcomes == (["cancelled"] if statuses[jid] == "cancelled" else [])
        if results[jid] is CancelResult.REMOVED:
            assert starts[jid] == 0
    processed = int(inspect.get(keys.stat("default", "processed")) or 0)
    removed = sum(result is CancelResult.REMOVED for result in results.values())
    assert processed + removed == len(jids)
    assert int(inspect.get(keys.stat("default", "cancelled")) or 0) == len(cancelled)
    oracle.assert_nothing_left_behind(inspect)


def test_a_cancel_sent_to_a_killed_holder_ends_the_job_at_its_recovery(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The process running a job is killed (kill -9), then the job is cancelled while that
    process is still registered: SIGNALLED, and the recovery of the orphan ends it as
    cancelled (status, timeline, counter, its unique lock let go of) instead of running it
    again to success elsewhere.  Sync only: the recovery, not the run, meets the cancel."""
    worker = start_worker()
    registered(inspect, 1)
    gate = oracle_file.with_suffix(".gate")
    jid = str(client.enqueue(jobs_limits.LoopsUntilCancelled, str(gate)))
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=worker.log_tail)
    worker.kill()
    assert client.cancel(jid) is CancelResult.SIGNALLED
    gate.touch()  # a run started again would now return
    fresh = start_worker()
    wait_until(lambda: client.status(jid) == "cancelled", 60, message=fresh.log_tail)
    after = str(client.enqueue(jobs.Count, 1))
    wait_until(lambda: after in oracle.finished(oracle_file), 20, message=fresh.log_tail)
    stop_all(fresh)
    assert starts_of(oracle_file, jid) == 1
    assert attempt_outcomes(inspect, jid) == ["cancelled"]
    assert inspect.get(keys.stat("default", "cancelled")) == b"1"
    assert client.cancel(jid) is CancelResult.ALREADY_FINISHED
    assert not inspect.keys(keys.unique_lock("*", "*"))
    oracle.assert_nothing_left_behind(inspect)
