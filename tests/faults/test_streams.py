"""A job closing the process's stderr (the stream or fd 2) leaves the worker working and logging."""

from __future__ import annotations

from pathlib import Path

import redis

import cogworker
from tests.faults import jobs, jobs_liveness, oracle
from tests.faults.conftest import StartWorker, registered, stop_all
from tests.faults.liveness_support import APP
from tests.support.processes import CogworkerProcess, wait_until


def runs_on_after(
    worker: CogworkerProcess, client: cogworker.Client, oracle_file: Path, job: type[cogworker.Job]
) -> None:
    """Run `job` on `worker`, then three Count jobs: they run, and the log shows them."""
    harm = client.enqueue(job)
    assert harm is not None
    wait_until(lambda: harm in oracle.finished(oracle_file), 20, message=worker.log_tail)
    later = [jid for jid in client.enqueue_many(jobs.Count, [[n] for n in range(3)]) if jid]
    wait_until(lambda: set(later) <= oracle.finished(oracle_file), 20, message=worker.log_tail)
    wait_until(lambda: all(jid in worker.log_text() for jid in later), 20, message=worker.log_tail)


def test_a_job_closing_sys_stderr_leaves_the_worker_working_and_logging(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """After a job closed `sys.stderr`, later jobs run and their log lines still appear."""
    worker = start_worker(APP)
    registered(inspect, 1)
    runs_on_after(worker, client, oracle_file, jobs_liveness.ClosesStderr)
    stop_all(worker)
    oracle.assert_nothing_left_behind(inspect)


def test_a_job_closing_fd_2_leaves_the_worker_working_and_logging(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """After a job closed file descriptor 2 (soon reused by a socket), later jobs run, the
    log goes on, and no log line reaches Redis as a command."""
    worker = start_worker(APP)
    registered(inspect, 1)
    runs_on_after(worker, client, oracle_file, jobs_liveness.ClosesFd2)
    stop_all(worker)
    assert "unknown command" not in worker.log_text()
    oracle.assert_nothing_left_behind(inspect)
