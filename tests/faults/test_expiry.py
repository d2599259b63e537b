"""Expiry on a real worker: a job not started by its `expires_at` is dropped when fetched or
when its retry would come too late (status, attempts, counters say `expired`), never run;
the others run as usual."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs_limits, oracle
from tests.faults.conftest import StartWorker, registered, stop_all
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies


@on_both_topologies
def test_a_job_fetched_past_its_expiry_is_dropped_unrun(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Queued past its expiry, and scheduled to run after it: both expired, never started,
    their unique locks let go of; a job that expires later runs."""
    now = time.time()
    stale = client.enqueue(jobs_limits.TrackedCount, 1, expires_at=now - 1)
    scheduled = client.enqueue_at(now + 0.5, jobs_limits.TrackedCount, 2, expires_at=now + 0.2)
    fresh = client.enqueue(jobs_limits.TrackedCount, 3, expires_in=3600)
    assert None not in (stale, scheduled, fresh)
    worker = start_worker()
    registered(inspect, 1)
    expired = {str(stale), str(scheduled)}
    wait_until(
        lambda: (
            all(client.status(jid) == "expired" for jid in expired)
            and client.status(str(fresh)) == "complete"
        ),
        20,
        message=worker.log_tail,
    )
    stop_all(worker)
    assert oracle.runs(oracle_file)[0] == {str(fresh): 1}
    assert inspect.get(keys.stat("default", "expired")) == b"2"
    assert inspect.get(keys.stat("default", "failed")) is None
    for jid in expired:
        [attempt] = inspect.lrange(keys.job_attempts("default", jid), 0, -1)
        assert json.loads(attempt)["outcome"] == "expired"
    assert not inspect.keys(keys.unique_lock("*", "*"))
    assert "expired before it started" in worker.log_text()
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_a_retry_that_would_come_past_the_expiry_is_expired_not_retried(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The class's expires_in=60 and a retry_in of 120 s: one run, its failure recorded as
    expired, nothing in the retry or dead set."""
    worker = start_worker()
    registered(inspect, 1)
    jid = str(client.enqueue(jobs_limits.FailsLateRetry))
    wait_until(lambda: client.status(jid) == "expired", 20, message=worker.log_tail)
    stop_all(worker)
    assert oracle.runs(oracle_file)[0] == {jid: 1}
    assert inspect.zcard(keys.retry("default")) == inspect.zcard(keys.dead("default")) == 0
    [attempt] = (json.loads(a) for a in inspect.lrange(keys.job_attempts("default", jid), 0, -1))
    assert (attempt["outcome"], attempt["error_class"]) == ("expired", "RuntimeError")
    assert inspect.get(keys.stat("default", "expired")) == b"1"
    oracle.assert_nothing_left_behind(inspect)
