"""A payload Redis's cjson can't read survives stops and crashes; a job hung across
stops ends in dead (issue #16 items 1 and 7)."""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.enqueue import EnqueueStore
from cogworker.domain import payload
from tests.faults import jobs_lua, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

APP = "tests.faults.jobs_lua:lua_config"
#: What `os.listdir` gives for a file name that isn't UTF-8: a lone surrogate.
UNDECODABLE_NAME = os.fsdecode(b"report-\xff.csv")


def _push_held(inspect: redis.Redis, *args: object, queue: str = "default") -> str:
    """Push a Held job as another client (or an older cogworker) would have: as is."""
    jid = secrets.token_hex(12)
    entry = {
        "class": "tests.faults.jobs_lua.Held",
        "args": list(args),
        "jid": jid,
        "queue": queue,
        "retry": True,
        "created_at": time.time(),
    }
    EnqueueStore(inspect).push(queue, [json.dumps(entry)])
    return jid


def _finish(inspect: redis.Redis, oracle_file: Path, jid: str) -> None:
    inspect.set(jobs_lua.release_key(jid), 1)
    wait_until(lambda: jid in oracle.finished(oracle_file), 30, message="the job never finished")


def test_a_lone_surrogate_in_the_arguments_is_refused_at_enqueue(
    client: cogworker.Client,
) -> None:
    """A str that isn't valid Unicode is a TypeError naming the argument, nothing pushed."""
    with pytest.raises(TypeError, match=r"args\[1\]\['name'\] is a str with a lone surrogate"):
        client.enqueue(jobs_lua.Held, 1, {"name": UNDECODABLE_NAME})


def test_arguments_nested_too_deep_are_refused_at_enqueue(client: cogworker.Client) -> None:
    """Arguments nested past what JSON readers take are a TypeError naming where."""
    nested: list[object] = []
    for _ in range(1_000):
        nested = [nested]
    with pytest.raises(TypeError, match=r"args\[0\]\[0\].* nested more than 100 levels deep"):
        client.enqueue(jobs_lua.Held, nested)


def test_a_surrogate_payload_running_at_sigterm_goes_back_and_runs_again(
    start_worker: StartWorker, inspect: redis.Redis, oracle_file: Path
) -> None:
    """SIGTERM while a job cjson can't decode runs: it is requeued, not buried as an orphan."""
    first = start_worker(APP)
    registered(inspect, 1)
    jid = _push_held(inspect, UNDECODABLE_NAME)
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 30, message=first.log_tail)
    stop_all(first)
    second = start_worker(APP)
    wait_until(lambda: starts_of(oracle_file, jid) == 2, 30, message=second.log_tail)
    _finish(inspect, oracle_file, jid)
    stop_all(second)
    assert inspect.zcard(keys.dead("default")) == 0
    assert inspect.lrange("deaths", 0, -1) == []
    oracle.assert_nothing_left_behind(inspect)


def test_a_surrogate_payload_killed_mid_run_is_recovered_and_runs_again(
    start_worker: StartWorker, inspect: redis.Redis, oracle_file: Path
) -> None:
    """kill -9 while a job cjson can't decode runs: another process runs it again."""
    victim = start_worker(APP)
    registered(inspect, 1)
    jid = _push_held(inspect, UNDECODABLE_NAME)
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 30, message=victim.log_tail)
    survivor = start_worker(APP)
    registered(inspect, 2)
    victim.kill()
    wait_until(lambda: starts_of(oracle_file, jid) == 2, 40, message=survivor.log_tail)
    _finish(inspect, oracle_file, jid)
    stop_all(survivor)
    assert inspect.zcard(keys.dead("default")) == 0
    assert inspect.lrange("deaths", 0, -1) == []
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_a_job_still_running_at_every_stop_ends_in_dead_with_its_hooks(
    start_worker: StartWorker, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Hung jobs of two queues handed back at more stops than max_handbacks: each parked on
    its own queue's list, then dead in its queue's dead set, JobHandedBackError, the death
    hooks run, and never run again; a job behind them does run."""
    app = "tests.faults.jobs_lua:handback_config"
    budget = jobs_lua.handback_config.max_handbacks
    queues = ("default", "mail")
    hung = {queue: _push_held(inspect, "hung", queue=queue) for queue in queues}
    for stop in range(budget + 1):
        worker = start_worker(app, queues=queues, concurrency=2)
        runs = stop + 1
        wait_until(
            lambda: all(starts_of(oracle_file, jid) == runs for jid in hung.values()),  # noqa: B023  # used before the loop moves on
            30,
            message=worker.log_tail,
        )
        stop_all(worker)
    for queue, jid in hung.items():  # parked by the last stop, for the next reconciler
        (parked,) = inspect.lrange(keys.repeat_handbacks(queue), 0, -1)
        assert json.loads(parked)["jid"] == jid
    behind = _push_held(inspect, "behind")
    worker = start_worker(app, queues=queues, concurrency=2)

    def buried() -> bool:
        return all(inspect.zcard(keys.dead(queue)) == 1 for queue in queues)

    wait_until(buried, 40, message=worker.log_tail)
    wait_until(lambda: starts_of(oracle_file, behind) == 1, 30, message=worker.log_tail)
    _finish(inspect, oracle_file, behind)
    stop_all(worker)
    for queue, jid in hung.items():
        entry = payload.decode(inspect.zrange(keys.dead(queue), 0, -1)[0]).unwrap()
        assert entry.jid == jid
        assert entry.error_class == "cogworker.exceptions.JobHandedBackError"
        assert entry.error_message == f"still running at more than {budget} worker stops"
        assert starts_of(oracle_file, jid) == budget + 1
        assert not inspect.exists(keys.handbacks(queue, jid))
        assert inspect.llen(keys.repeat_handbacks(queue)) == 0
    deaths = set(inspect.lrange("deaths", 0, -1))
    assert deaths == {f"JobHandedBackError {jid}".encode() for jid in hung.values()}
    oracle.assert_nothing_left_behind(inspect)
