"""Orphan recovery: kill -9 mid-job, a job that kills its process, a long job on a live process."""

from __future__ import annotations

from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.domain import payload
from tests.faults import jobs, oracle
from tests.faults.conftest import StartWorker, each_registered, registered, starts_of, stop_all
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies


@on_both_topologies
def test_a_job_killed_mid_run_runs_again_on_another_process(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    tmp_path: Path,
    kind: Kind,
) -> None:
    """kill -9 during a job: another process runs it again; the dead one leaves nothing."""
    victim = start_worker()
    registered(inspect, 1)
    gate = tmp_path / "gate"  # opened after the kill: the first run can't end before it
    jid = client.enqueue(of_kind(jobs.DoneAtGate, kind), str(gate))
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message="first run started")
    survivor = start_worker()
    registered(inspect, 2)
    victim.kill()
    gate.touch()
    wait_until(lambda: jid in oracle.finished(oracle_file), 30, message=survivor.log_tail)
    stop_all(survivor)
    assert oracle.runs(oracle_file)[0][jid] == 2  # starts = 1 + kills
    oracle.assert_each_in_one_place(inspect, [jid], done={jid})
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_a_job_that_kills_its_process_every_time_ends_in_dead(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """A poison job: dead after max_orphanings requeues, with JobOrphanedError, never run again."""
    workers = [start_worker(), start_worker()]
    registered(inspect, 2)
    jid = client.enqueue(of_kind(jobs.KillsItsProcess, kind))
    assert jid is not None

    def buried() -> bool:
        for index, worker in enumerate(workers):
            if not worker.is_running:  # keep two alive: one to die, one to reconcile
                workers[index] = start_worker()
        return inspect.zcard(keys.dead("default")) == 1

    wait_until(buried, 90, interval=0.2, message=lambda: workers[0].log_tail())
    entry = payload.decode(inspect.zrange(keys.dead("default"), 0, -1)[0]).unwrap()
    assert entry.jid == jid
    assert entry.error_class == "cogworker.exceptions.JobOrphanedError"
    assert entry.error_message == f"orphaned more than {jobs.config.max_orphanings} times"
    assert starts_of(oracle_file, jid) == jobs.config.max_orphanings + 1
    each_registered(inspect, *workers)
    stop_all(*workers)
    assert starts_of(oracle_file, jid) == jobs.config.max_orphanings + 1
    oracle.assert_nothing_left_behind(inspect)


def test_a_live_process_with_a_long_cpu_bound_job_is_never_reconciled(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """A job busy for three orphan thresholds on a live process runs once, unrecovered (an
    async one blocking the event loop all that time: the heartbeat has a thread of its own)."""
    busy, watcher = start_worker(), start_worker()
    registered(inspect, 2)
    seconds = 3 * jobs.config.orphan_threshold
    jid = client.enqueue(of_kind(jobs.BurnsCpu, kind), seconds)
    assert jid is not None
    wait_until(lambda: jid in oracle.finished(oracle_file), seconds + 30, message=busy.log_tail)
    stop_all(busy, watcher)
    assert starts_of(oracle_file, jid) == 1
    assert "is gone" not in busy.log_text() + watcher.log_text()
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_racing_reconcilers_requeue_each_orphan_exactly_once(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Three processes reconcile the same dead one: every orphan is requeued once."""
    victim = start_worker(concurrency=6)
    registered(inspect, 1)
    jids = [jid for jid in client.enqueue_many(jobs.Sleep, [[3.0]] * 6) if jid]
    wait_until(lambda: all(starts_of(oracle_file, j) == 1 for j in jids), 20, message="started")
    survivors = [start_worker(), start_worker(), start_worker()]
    registered(inspect, 4)
    victim.kill()
    wait_until(lambda: set(jids) <= oracle.finished(oracle_file), 40, message=survivors[0].log_tail)
    stop_all(*survivors)
    assert {jid: starts_of(oracle_file, jid) for jid in jids} == dict.fromkeys(jids, 2)
    recoveries = sum(worker.log_text().count("is gone") for worker in survivors)
    assert recoveries == 1
    oracle.assert_nothing_left_behind(inspect)
