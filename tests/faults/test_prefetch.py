"""Prefetched jobs (fetched ahead of a free thread) under a stop and a kill -9: none lost."""

from __future__ import annotations

import signal
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerProcess, wait_until

#: One place for a running job, on a thread or on the loop, and four in the buffer.
ONE_PLACE_PREFETCH = ["--async-concurrency", "1", "--prefetch", "4"]


def _one_running_four_waiting(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> tuple[CogworkerProcess, str, list[str]]:
    """A one-thread worker running a long job, with four more fetched into its buffer.

    An async job runs in the loop's one place: the thread goes back for the next job
    and waits there with it for a place, the other three in the buffer.
    """
    worker = start_worker(concurrency=1, extra_args=ONE_PLACE_PREFETCH)
    registered(inspect, 1)
    [identity] = [member.decode() for member in inspect.smembers(keys.PROCESSES)]
    running = client.enqueue(of_kind(jobs.Sleep, kind), 60.0)
    assert running is not None
    wait_until(lambda: starts_of(oracle_file, running) == 1, 20, message=worker.log_tail)
    # One push for all four: the fetch that wakes for the first finds the others there.
    counts = of_kind(jobs.Count, kind)
    waiting = [jid for jid in client.enqueue_many(counts, [[n] for n in range(4)]) if jid]
    # They leave the queue for the worker's in-progress list, though its one thread is busy.
    wait_until(
        lambda: (
            inspect.llen(keys.in_progress("default", identity)) == 5
            and not inspect.llen(keys.queue("default"))
        ),
        20,
        message=worker.log_tail,
    )
    assert len(waiting) == 4
    return worker, running, waiting


def test_a_stop_puts_prefetched_jobs_back_unrun(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """SIGTERM: the prefetched jobs never start there and are back on their queue, once each."""
    worker, running, waiting = _one_running_four_waiting(
        start_worker, client, inspect, oracle_file, kind
    )
    worker.send_signal(signal.SIGTERM)
    assert worker.wait_for_exit(20) == 0, worker.log_tail()
    assert all(starts_of(oracle_file, jid) == 0 for jid in waiting)
    oracle.assert_each_in_one_place(inspect, [running, *waiting], done=set())
    assert inspect.llen(keys.queue("default")) == 5

    survivor = start_worker()
    wait_until(lambda: set(waiting) <= oracle.finished(oracle_file), 30, message=survivor.log_tail)
    stop_all(survivor)
    assert all(starts_of(oracle_file, jid) == 1 for jid in waiting)


def test_a_killed_process_s_prefetched_jobs_run_once_elsewhere(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """kill -9 with jobs in the buffer: another process recovers them, and each runs once."""
    victim, running, waiting = _one_running_four_waiting(
        start_worker, client, inspect, oracle_file, kind
    )
    survivor = start_worker()
    registered(inspect, 2)
    victim.kill()
    wait_until(lambda: set(waiting) <= oracle.finished(oracle_file), 30, message=survivor.log_tail)
    wait_until(lambda: starts_of(oracle_file, running) == 2, 30, message=survivor.log_tail)
    stop_all(survivor)
    assert all(starts_of(oracle_file, jid) == 1 for jid in waiting)
    oracle.assert_each_in_one_place(inspect, [running, *waiting], done=set(waiting))
