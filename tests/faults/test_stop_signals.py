"""SIGHUP is a graceful stop; a second SIGTERM during the drain stops at once."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs, jobs_liveness, oracle
from tests.faults.conftest import StartWorker, registered, starts_of
from tests.faults.liveness_support import APP
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerProcess, wait_until


def test_sighup_is_a_graceful_stop(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """SIGHUP with a job running: the job finishes, the process exits 0 and leaves nothing."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jid = client.enqueue(of_kind(jobs.Sleep, kind), 2.0)
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=worker.log_tail)
    worker.send_signal(signal.SIGHUP)
    assert worker.wait_for_exit(30) == 0, worker.log_tail()
    assert oracle.runs(oracle_file)[1][jid] == 1
    oracle.assert_each_in_one_place(inspect, [jid], done={jid})
    oracle.assert_nothing_left_behind(inspect)


def stops_at_once_when_told_twice(
    target: CogworkerProcess,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """A job longer than the drain on `target`; SIGTERM, then SIGTERM again once the drain
    began: `target` exits 0 long before the drain's end, the job back on its queue."""
    jid = client.enqueue(of_kind(jobs.Sleep, kind), 600.0)
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=target.log_tail)
    target.send_signal(signal.SIGTERM)
    wait_until(lambda: "stopping" in target.log_text(), 20, message=target.log_tail)
    target.send_signal(signal.SIGTERM)
    assert target.wait_for_exit(jobs_liveness.config.shutdown_timeout / 2) == 0
    assert "go back unfinished" in target.log_text()
    assert inspect.llen(keys.queue("default")) == 1
    oracle.assert_each_in_one_place(inspect, [jid], done=set())
    oracle.assert_nothing_left_behind(inspect)


@pytest.mark.parametrize("processes", [1, 2], ids=["worker", "supervisor"])
def test_a_second_sigterm_stops_at_once(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    processes: int,
    kind: Kind,
) -> None:
    """A second SIGTERM during the drain: the running job goes back unfinished at once (with
    `--processes 2`, the supervisor forwards the second request to its children)."""
    worker = start_worker(APP, extra_args=["--processes", str(processes)])
    registered(inspect, processes)
    stops_at_once_when_told_twice(worker, client, inspect, oracle_file, kind)


def test_sighup_to_the_supervisor_drains_its_children(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """SIGHUP to the supervisor: each child drains (its running job finishes), all exit 0."""
    supervisor = start_worker(APP, extra_args=["--processes", "2"])
    registered(inspect, 2)
    jid = client.enqueue(jobs.Sleep, 2.0)
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=supervisor.log_tail)
    supervisor.send_signal(signal.SIGHUP)
    assert supervisor.wait_for_exit(30) == 0, supervisor.log_tail()
    assert oracle.runs(oracle_file)[1][jid] == 1
    assert "exited (exit code 0)" in supervisor.log_text()
    oracle.assert_nothing_left_behind(inspect)
