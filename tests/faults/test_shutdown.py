"""Stopping: jobs past the shutdown timeout go back to their queue and run again exactly once."""

from __future__ import annotations

import signal
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies


@on_both_topologies
def test_jobs_cut_off_by_shutdown_run_again_exactly_once_on_a_new_process(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """SIGTERM with jobs running past the timeout, then a new process: each runs once more
    (an async one cancelled on the event loop, a sync one left to the exiting process)."""
    first = start_worker()
    registered(inspect, 1)
    seconds = jobs.config.shutdown_timeout + 2.0
    jids = [jid for jid in client.enqueue_many(of_kind(jobs.Sleep, kind), [[seconds]] * 3) if jid]
    wait_until(lambda: all(starts_of(oracle_file, j) == 1 for j in jids), 20, message="started")
    first.send_signal(signal.SIGTERM)
    assert first.wait_for_exit(20) == 0, first.log_tail()
    assert inspect.llen(keys.queue("default")) == 3
    oracle.assert_nothing_left_behind(inspect)
    second = start_worker()
    wait_until(lambda: set(jids) <= oracle.finished(oracle_file), 30, message=second.log_tail)
    stop_all(second)
    assert {jid: starts_of(oracle_file, jid) for jid in jids} == dict.fromkeys(jids, 2)
    oracle.assert_each_in_one_place(inspect, jids, done=set(jids))
    oracle.assert_nothing_left_behind(inspect)
