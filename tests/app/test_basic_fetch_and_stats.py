"""Basic fetch, and the processed / failed counters."""

from __future__ import annotations

import time

import redis

import cogworker
from cogworker import tracking
from cogworker.adapters import redis_keys as keys
from cogworker.domain.stats import day_of
from tests.app.helpers import Workers, logs, wait_for_processes
from tests.app.jobs import Gate, NoRetryFalse, Record
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies


def in_progress_keys(rc: redis.Redis) -> list[bytes]:
    """Every in-progress list in Redis."""
    return list(rc.scan_iter(match="cogworker:{q:*}:inprogress:*"))


def test_basic_fetch_runs_jobs_without_an_in_progress_list(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """With `fetch="basic"` jobs run, and none is ever on an in-progress list."""
    worker = workers.start("tests.app.jobs:basic_config")
    [identity] = wait_for_processes(rc, 1, worker)
    gated = client.enqueue(Gate, "basic")
    assert gated is not None
    wait_until(
        lambda: rc.sismember("started", gated),
        10.0,
        message=lambda: f"the gated job never started; log:\n{worker.log_tail()}",
    )

    # Running right now, yet on no list at all.
    assert in_progress_keys(rc) == []
    assert rc.llen(keys.queue("default")) == 0
    assert rc.hget(keys.process(identity), "fetch") == b"basic"
    jids = [client.enqueue(Record, n) for n in range(20)]
    wait_until(
        lambda: rc.scard("done") == len(jids),
        10.0,
        message=lambda: f"{rc.scard('done')} of {len(jids)} ran; log:\n{worker.log_tail()}",
    )
    assert in_progress_keys(rc) == []
    rc.set("gate:basic", 1)
    wait_until(lambda: rc.sismember("finished", gated), 10.0, message="gate never finished")
    wait_until(
        lambda: tracking.totals(rc)["processed"] == len(jids) + 1,
        10.0,
        message="the gated job was never counted",
    )
    assert in_progress_keys(rc) == []
    assert rc.zcard("cogworker:{q:default}:dead") == rc.zcard("cogworker:{q:default}:retry") == 0


def test_processed_and_failed_counters_in_total_and_per_day(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """After 7 successes and 3 failures, processed is 10 and failed 3, in total and for today."""
    first_day = day_of(time.time())
    succeeded = [client.enqueue(Record, n) for n in range(7)]
    failed = [client.enqueue(NoRetryFalse, n) for n in range(3)]
    worker = workers.start()

    wait_until(
        lambda: (
            rc.zcard("cogworker:{q:default}:dead") == 3 and tracking.totals(rc)["processed"] == 10
        ),
        15.0,
        message=lambda: f"not all settled; log:\n{logs(worker)}",
    )
    days = sorted({first_day, day_of(time.time())})  # a run across midnight UTC counts in two

    assert rc.scard("done") == 7
    assert tracking.totals(rc) == {"processed": 10, "failed": 3}
    # Counted on the jobs' queue, in its slot.
    assert int(rc.get(keys.stat("default", "processed")) or 0) == 10
    assert int(rc.get(keys.stat("default", "failed")) or 0) == 3
    assert sum(int(rc.get(keys.stat("default", "processed", day)) or 0) for day in days) == 10
    assert sum(int(rc.get(keys.stat("default", "failed", day)) or 0) for day in days) == 3
    assert rc.ttl(keys.stat("default", "processed", days[-1])) > 0
    # One log line per start and outcome, with jid, class, queue (and duration at the end).
    log = worker.log_text()
    for jid, job_class, outcome in [
        (succeeded[0], Record, "done"),
        (failed[0], NoRetryFalse, "fail"),
    ]:
        fields = f"jid={jid} class={job_class.class_path()} queue=default"
        assert f"INFO start {fields}" in log
        assert any(
            f" {outcome} {fields}" in line and " duration=" in line for line in log.splitlines()
        ), log
