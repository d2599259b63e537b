"""Redis outages: stopped while jobs fail, killed mid-drain (AOF), frozen."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.domain import payload, settlement
from tests.faults import jobs, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer

RETRYABLE = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)


def test_failures_while_redis_is_down_are_filed_once_it_is_back(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    server: RedisServer,
    tmp_path: Path,
    kind: Kind,
) -> None:
    """Jobs failing while Redis is stopped take the interrupt path: retry after 30 s x 1."""
    worker = start_worker()
    registered(inspect, 1)
    gate = tmp_path / "gate"
    failing = of_kind(jobs.FailsAtGate, kind)
    jids = [jid for jid in client.enqueue_many(failing, [[str(gate)]] * 3) if jid]
    wait_until(lambda: all(starts_of(oracle_file, j) == 1 for j in jids), 20, message="started")
    server.stop()
    gate.touch()
    wait_until(lambda: oracle.finished(oracle_file) >= set(jids), 20, message="jobs failed")
    wait_until(lambda: "will file it later" in worker.log_text(), 20, message=worker.log_tail)
    server.restart()

    def filed() -> bool:
        return bool(inspect.zcard(keys.retry("default")) == len(jids))

    wait_until(filed, 30, ignore=RETRYABLE, message=worker.log_tail)
    for raw, score in inspect.zrange(keys.retry("default"), 0, -1, withscores=True):
        job = payload.decode(raw).unwrap()
        assert job.jid in jids
        assert job.interrupted_count == 1
        assert job.retry_count == 1
        assert job.failed_at is not None
        assert score == pytest.approx(job.failed_at + settlement.INTERRUPT_DELAY, abs=2.0)
    stop_all(worker)
    assert all(starts_of(oracle_file, jid) == 1 for jid in jids)
    oracle.assert_each_in_one_place(inspect, jids, done=set())
    oracle.assert_nothing_left_behind(inspect)


def test_a_stop_while_redis_stays_away_leaves_the_running_job_to_orphan_recovery(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    server: RedisServer,
    tmp_path: Path,
    kind: Kind,
) -> None:
    """SIGTERM while Redis is stopped: the worker can't hand its running job back, tries
    for a while, says so and exits; once Redis is back another process recovers the job as
    an orphan and runs it to the end: run twice, lost never."""
    worker = start_worker()
    registered(inspect, 1)
    gate = tmp_path / "gate"
    jid = str(client.enqueue(of_kind(jobs.DoneAtGate, kind), str(gate)))
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=worker.log_tail)
    server.stop()
    worker.send_signal(signal.SIGTERM)
    wait_until(lambda: "Redis stayed away at shutdown" in worker.log_text(), 60,
               message=worker.log_tail)  # fmt: skip
    assert worker.wait_for_exit(20) == 0, worker.log_tail()
    server.restart()
    gate.touch()
    survivor = start_worker()
    wait_until(lambda: jid in oracle.finished(oracle_file), 60, ignore=RETRYABLE,
               message=survivor.log_tail)  # fmt: skip
    stop_all(survivor)
    assert starts_of(oracle_file, jid) == 2
    oracle.assert_each_in_one_place(inspect, [jid], done={jid})
    oracle.assert_nothing_left_behind(inspect)


Fault = Callable[[list[CogworkerProcess]], None]
DrainThrough = Callable[[int, Fault, Kind], dict[str, int]]


@pytest.fixture
def drain_through(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> DrainThrough:
    """Enqueue N jobs of a kind, start two workers, apply a fault a fifth of the way through.

    Waits until every job has finished and both workers have stopped, checks
    each job is nowhere in Redis and nothing is left behind, and gives the
    number of starts per jid.
    """

    def drain(count: int, fault: Fault, kind: Kind) -> dict[str, int]:
        counts = of_kind(jobs.Count, kind)
        jids = [jid for jid in client.enqueue_many(counts, [[n] for n in range(count)]) if jid]
        workers = [start_worker(), start_worker()]
        wait_until(lambda: len(oracle.finished(oracle_file)) >= count // 5, 60, message="draining")
        fault(workers)
        wait_until(
            lambda: oracle.finished(oracle_file) >= set(jids), 120, message=workers[0].log_tail
        )
        stop_all(*workers)
        oracle.assert_each_in_one_place(inspect, jids, done=set(jids))
        oracle.assert_nothing_left_behind(inspect)
        starts = oracle.runs(oracle_file)[0]
        return {jid: starts[jid] for jid in jids}

    return drain


def test_a_redis_kill_and_restart_mid_drain_loses_no_job(
    drain_through: DrainThrough, server: RedisServer, kind: Kind
) -> None:
    """With appendonly + fsync always, kill -9 Redis mid-drain of 5,000 jobs: none lost."""

    def kill_and_restart(_: list[CogworkerProcess]) -> None:
        server.kill()
        server.restart()

    starts = drain_through(5000, kill_and_restart, kind)
    twice = {jid for jid, count in starts.items() if count > 1}
    # Duplicates only among jobs in flight at the kill: at most the places of both workers,
    # their threads' (and their event loops', for async jobs).
    loop_places = jobs.config.async_concurrency if kind == "async" else 0
    assert len(twice) <= 2 * (jobs.config.concurrency + loop_places), twice
    assert max(starts.values()) <= 2
    print(f"\nRedis kill mid-drain: 0 of 5000 lost, {len(twice)} run twice")


def test_a_frozen_redis_is_ridden_through_without_duplicates(
    drain_through: DrainThrough, server: RedisServer, kind: Kind
) -> None:
    """Redis frozen (SIGSTOP) past the socket timeout mid-drain: every job runs exactly once."""

    def freeze(workers: list[CogworkerProcess]) -> None:
        server.pause()
        wait_until(lambda: "failed (TimeoutError" in workers[0].log_text(), 30, message="timeout")
        server.resume()

    starts = drain_through(3000, freeze, kind)
    assert {jid for jid, count in starts.items() if count != 1} == set()


def test_a_freeze_past_the_threshold_but_within_the_socket_timeout_recovers_no_live_process(
    drain_through: DrainThrough, server: RedisServer
) -> None:
    """Redis frozen longer than the orphan threshold yet shorter than the socket timeout: no
    call fails, so no process knows of an outage, and every heartbeat looks old at once when
    Redis wakes.  Recovery waits for the beats to resume: every job runs exactly once."""
    frozen: list[CogworkerProcess] = []

    def freeze(workers: list[CogworkerProcess]) -> None:
        server.pause()
        # The fault itself, not a wait for something: a freeze of 1.5 thresholds.
        time.sleep(1.5 * jobs.config.orphan_threshold)
        server.resume()
        frozen.extend(workers)

    starts = drain_through(3000, freeze, "sync")
    assert {jid for jid, count in starts.items() if count != 1} == set()
    assert not any("is gone" in worker.log_text() for worker in frozen)


def test_after_an_outage_longer_than_the_threshold_no_live_process_is_recovered(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    server: RedisServer,
) -> None:
    """Redis down past the orphan threshold: live processes re-register, none is judged gone."""
    app = "tests.faults.jobs:slow_beat_config"
    workers = [start_worker(app), start_worker(app)]
    registered(inspect, 2)
    seconds = 4 * jobs.slow_beat_config.orphan_threshold
    jids = [jid for jid in client.enqueue_many(jobs.Sleep, [[seconds]] * 4) if jid]
    wait_until(lambda: all(starts_of(oracle_file, j) == 1 for j in jids), 20, message="started")
    server.stop()
    wait_until(
        lambda: all("heartbeat failed" in w.log_text() for w in workers), 20, message="noticed"
    )
    # The fault itself, not a wait for something: an outage outlasting the threshold.
    time.sleep(1.5 * jobs.slow_beat_config.orphan_threshold)
    server.start()
    wait_until(lambda: oracle.finished(oracle_file) >= set(jids), 60, message=workers[0].log_tail)
    stop_all(*workers)
    assert {jid: starts_of(oracle_file, jid) for jid in jids} == dict.fromkeys(jids, 1)
    assert not any("is gone" in worker.log_text() for worker in workers)
    oracle.assert_nothing_left_behind(inspect)
