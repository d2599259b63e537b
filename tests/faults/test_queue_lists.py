"""In-progress lists per (process, queue) with real worker processes: a worker fetching
from two queues holds each queue's jobs on its list of that queue; killed, its jobs of
both queues are recovered by another worker; stopped, it hands each back to its own
queue; nothing is left behind either way."""

from __future__ import annotations

import json
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.faults.jobs_queues import QUEUES, SleepHigh, SleepLow
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

APP = "tests.faults.jobs_queues:config"


def _identity(inspect: redis.Redis) -> str:
    [identity] = inspect.smembers(keys.PROCESSES)
    return str(identity.decode())


def _held(inspect: redis.Redis, identity: str) -> dict[str, list[str]]:
    """The jids on each of `identity`'s in-progress lists, by queue."""
    return {
        queue: [
            json.loads(raw)["jid"]
            for raw in inspect.lrange(keys.in_progress(queue, identity), 0, -1)
        ]
        for queue in QUEUES
    }


@on_both_topologies
def test_a_killed_worker_s_jobs_of_two_queues_come_back_and_run_again(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
) -> None:
    """kill -9 with two jobs of each queue running: each on the victim's list of its queue,
    its set naming both; another worker recovers every one, each runs again and ends;
    no list or set is left."""
    victim = start_worker(APP)
    registered(inspect, 1)
    identity = _identity(inspect)
    jids = {
        "high": [client.enqueue(SleepHigh, 4.0) for _ in range(2)],
        "low": [client.enqueue(SleepLow, 4.0) for _ in range(2)],
    }
    every = [jid for queue in QUEUES for jid in jids[queue] if jid]
    assert len(every) == 4
    wait_until(
        lambda: all(starts_of(oracle_file, jid) == 1 for jid in every), 20, message=victim.log_tail
    )
    held = _held(inspect, identity)
    assert {queue: sorted(held[queue]) for queue in QUEUES} == {
        q: sorted(map(str, jids[q])) for q in QUEUES
    }
    assert inspect.smembers(keys.process_queues(identity)) == {q.encode() for q in QUEUES}

    survivor = start_worker(APP)
    registered(inspect, 2)
    victim.kill()
    wait_until(lambda: set(every) <= oracle.finished(oracle_file), 40, message=survivor.log_tail)

    stop_all(survivor)
    assert all(oracle.runs(oracle_file)[0][jid] == 2 for jid in every)
    assert not inspect.exists(keys.process_queues(identity))
    oracle.assert_each_in_one_place(inspect, every, done=set(every))
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_a_stopped_worker_hands_each_queue_s_job_back_to_its_own_queue(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
) -> None:
    """SIGTERM while a job of each queue runs past the shutdown timeout: each goes back to
    the front of its own queue; the worker's lists and set are gone."""
    worker = start_worker(APP)
    registered(inspect, 1)
    identity = _identity(inspect)
    high, low = client.enqueue(SleepHigh, 30), client.enqueue(SleepLow, 30)
    assert high is not None
    assert low is not None
    wait_until(lambda: starts_of(oracle_file, high) == starts_of(oracle_file, low) == 1, 20,
               message=worker.log_tail)  # fmt: skip

    stop_all(worker)

    for queue, jid in (("high", high), ("low", low)):
        assert [json.loads(raw)["jid"] for raw in inspect.lrange(keys.queue(queue), 0, -1)] == [jid]
        assert not inspect.exists(keys.in_progress(queue, identity))
    assert not inspect.exists(keys.process_queues(identity))
    assert inspect.scard(keys.PROCESSES) == 0
