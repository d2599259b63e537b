"""Liveness: a job holding the GIL in C code never makes its process look gone; freezing does."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs, jobs_async, jobs_liveness, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.faults.liveness_support import APP, THRESHOLD, identity_of
from tests.support.processes import wait_until


def holds_gil_once(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    *extra_args: str,
) -> None:
    """Two worker processes (or a supervisor's two), a job holding the GIL for four
    thresholds: it runs exactly once, and no process is judged gone."""
    workers = [start_worker(APP, extra_args=list(extra_args))]
    if not extra_args:
        workers.append(start_worker(APP))
    registered(inspect, 2)
    jid = client.enqueue(jobs_liveness.HoldsGil, 4 * THRESHOLD)
    assert jid is not None
    wait_until(lambda: jid in oracle.finished(oracle_file), 60, message=workers[0].log_tail)
    stop_all(*workers)
    assert starts_of(oracle_file, jid) == 1
    assert all("is gone" not in worker.log_text() for worker in workers)
    oracle.assert_each_in_one_place(inspect, [jid], done={jid})
    oracle.assert_nothing_left_behind(inspect)


def test_a_job_holding_the_gil_past_the_threshold_runs_once(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """`sum(range(N))` holding the GIL for four thresholds beside a reconciling process:
    its process stays alive in Redis, and the job runs exactly once."""
    holds_gil_once(start_worker, client, inspect, oracle_file)


def test_a_job_holding_the_gil_runs_once_under_the_supervisor(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The same with `--processes 2`: one child holds the GIL, its sibling reconciles."""
    holds_gil_once(start_worker, client, inspect, oracle_file, "--processes", "2")


def test_a_frozen_process_is_still_judged_gone(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """SIGSTOP to a process with a job: its pulse stops beating for it, so a second
    process recovers the job and runs it; once woken and stopped, nothing is left."""
    frozen = start_worker(APP)
    frozen_identity = identity_of(inspect, frozen.pid)
    jid = client.enqueue(jobs.Sleep, 4 * THRESHOLD)
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=frozen.log_tail)
    os.kill(frozen.pid, signal.SIGSTOP)
    watcher = start_worker(APP)
    registered(inspect, 2)
    try:
        wait_until(lambda: starts_of(oracle_file, jid) == 2, 30, message=watcher.log_tail)
        # The reconciler logs after its requeue returns, so the fetcher may start the
        # job before that line is written: wait for it rather than read it once.
        gone_line = f"process {frozen_identity} is gone"
        wait_until(lambda: gone_line in watcher.log_text(), 10, message=watcher.log_tail)
    finally:
        os.kill(frozen.pid, signal.SIGCONT)
    wait_until(lambda: oracle.runs(oracle_file)[1][jid] == 2, 30, message=watcher.log_tail)
    stop_all(frozen, watcher)
    oracle.assert_nothing_left_behind(inspect)


#: A worker with one place for a job and two more fetched ahead, by where its jobs run:
#: its options, the job it runs until a gate file appears, and the quick buffered job.
WOKEN_AFTER_RECOVERY = {
    "threads": (["--prefetch", "2"], jobs.DoneAtGate, jobs.Count, [[1], [2]]),
    "event loop": (
        ["--async-concurrency", "1", "--prefetch", "2"],
        jobs_async.AwaitsAGate,
        jobs_async.AsyncSleep,
        [[0], [0]],
    ),
}
#: How long Redis holds writes back (its beat's too) while the woken process resumes.
WRITES_HELD_MS = 3000


@pytest.mark.parametrize("runs_on", sorted(WOKEN_AFTER_RECOVERY))
def test_a_process_woken_after_its_recovery_runs_none_of_its_old_jobs(
    runs_on: str,
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    tmp_path: Path,
) -> None:
    """SIGSTOP to a process running a job in its one place (a thread, or the event loop)
    with two more fetched into its buffer; a second process recovers all three and runs
    them.  The first is woken with its job's gate open and Redis holding writes back, so
    its place frees before any beat of its can land: it waits for that beat before it
    starts anything, learns it was declared gone and lets go of what it held.  The two
    buffered jobs run once (elsewhere), the running one twice (a recovery's rerun), and
    nothing is lost or left behind."""
    options, gated_job, quick_job, quick_args = WOKEN_AFTER_RECOVERY[runs_on]
    gate = tmp_path / "gate"
    frozen = start_worker(APP, concurrency=1, extra_args=options)
    identity = identity_of(inspect, frozen.pid)
    running = client.enqueue(gated_job, str(gate))
    assert running is not None
    wait_until(lambda: starts_of(oracle_file, running) == 1, 20, message=frozen.log_tail)
    buffered = [jid for jid in client.enqueue_many(quick_job, quick_args) if jid]
    assert len(buffered) == 2
    wait_until(
        lambda: inspect.llen(keys.in_progress("default", identity)) == 3,
        20,
        message=frozen.log_tail,
    )
    os.kill(frozen.pid, signal.SIGSTOP)
    watcher = start_worker(APP)
    try:
        wait_until(
            lambda: set(buffered) <= oracle.finished(oracle_file), 30, message=watcher.log_tail
        )
        wait_until(lambda: starts_of(oracle_file, running) == 2, 30, message=watcher.log_tail)
        inspect.execute_command("CLIENT", "PAUSE", WRITES_HELD_MS, "WRITE")
        gate.touch()
    finally:
        os.kill(frozen.pid, signal.SIGCONT)
    wait_until(lambda: "declared gone" in frozen.log_text(), 30, message=frozen.log_tail)
    wait_until(lambda: oracle.runs(oracle_file)[1][running] == 2, 30, message=frozen.log_tail)
    stop_all(frozen, watcher)
    assert [starts_of(oracle_file, jid) for jid in buffered] == [1, 1]
    oracle.assert_each_in_one_place(inspect, [running, *buffered], done={running, *buffered})
    oracle.assert_nothing_left_behind(inspect)
