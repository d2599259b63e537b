"""A worker's beat survives a broken memory key and sends previews of huge arguments;
a `retry_in` of 1e300 is written whole (issue #16 items 16, 19 and 13)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.web.entries import JobView, clip
from cogworker.domain.retries import LONGEST_DELAY
from tests.faults import jobs_lua, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

APP = "tests.faults.jobs_lua:lua_config"


def _only_identity(inspect: redis.Redis) -> str:
    (member,) = inspect.smembers(keys.PROCESSES)
    return bytes(member).decode()


def _beat(inspect: redis.Redis, identity: str) -> float:
    return float(inspect.hget(keys.process(identity), "beat") or 0)


def test_a_wrong_typed_memory_key_leaves_the_worker_beating_and_alive(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The memory key SET to a string under a live worker: it beats on for a whole orphan
    threshold, nobody judges it gone, and its running job runs once."""
    busy = start_worker(APP)
    registered(inspect, 1)
    identity = _only_identity(inspect)
    jid = client.enqueue(jobs_lua.Held, "x")
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 30, message=busy.log_tail)
    watcher = start_worker(APP)
    registered(inspect, 2)
    inspect.set(keys.memory_history(identity), "not a sorted set")
    broken_at = float(inspect.time()[0])
    threshold = jobs_lua.lua_config.orphan_threshold
    wait_until(
        lambda: _beat(inspect, identity) > broken_at + 2 * threshold, 30, message=busy.log_tail
    )
    assert b"WRONGTYPE" in (inspect.hget(keys.process(identity), "memory_error") or b"")
    # Signals come with the beat's reply: they still arrive.
    ProcessRegistry(inspect).send(identity, "quiet")
    wait_until(
        lambda: inspect.hget(keys.process(identity), "quiet") == b"true", 30, message=busy.log_tail
    )
    ProcessRegistry(inspect).send(identity, "resume")
    inspect.set(jobs_lua.release_key(jid), 1)
    wait_until(lambda: jid in oracle.finished(oracle_file), 30, message=busy.log_tail)
    inspect.delete(keys.memory_history(identity))
    stop_all(busy, watcher)
    assert starts_of(oracle_file, jid) == 1
    assert "is gone" not in watcher.log_text()
    oracle.assert_nothing_left_behind(inspect)


def test_a_running_job_with_huge_arguments_is_shown_as_a_bounded_preview(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """4 MiB of arguments: the live-work record stays small, readable, and says it is cut."""
    worker = start_worker(APP)
    registered(inspect, 1)
    identity = _only_identity(inspect)
    args = ["x" * (4 << 20), {"small": 1}]
    jid = client.enqueue(jobs_lua.Held, *args)
    assert jid is not None
    work = wait_until(lambda: inspect.hvals(keys.workers(identity)), 30, message=worker.log_tail)
    (record,) = work
    assert len(record) < 2_000
    shown = json.loads(record)
    assert shown["jid"] == jid
    assert shown["args_cut"] is True
    shown_in_a_row = clip(JobView.of(record).args_text)
    assert shown_in_a_row.startswith(f'["(cut: the first 1,000 of {len(json.dumps(args)):,}')
    assert '[\\"xxxx' in shown_in_a_row
    inspect.set(jobs_lua.release_key(jid), 1)
    wait_until(lambda: jid in oracle.finished(oracle_file), 30, message=worker.log_tail)
    stop_all(worker)


@on_both_topologies
def test_a_retry_in_of_1e300_on_a_unique_job_is_written_whole(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The job waits in retry, capped at a hundred years, its lock extended as far and its
    status updated: no half-written settlement, no "lost ownership"."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jid = client.enqueue(jobs_lua.ParkedForever, 1)
    assert jid is not None
    wait_until(lambda: inspect.zcard(keys.retry("default")) == 1, 30, message=worker.log_tail)
    stop_all(worker)
    ((_, score),) = inspect.zrange(keys.retry("default"), 0, -1, withscores=True)
    assert time.time() + LONGEST_DELAY - 3600 < score <= time.time() + LONGEST_DELAY
    (lock,) = inspect.keys(keys.unique_lock("*", "*"))
    assert inspect.pttl(lock) > (LONGEST_DELAY - 3600) * 1000
    assert inspect.hget(keys.status("default", jid), "status") not in (b"queued", b"working")
    assert "lost ownership" not in worker.log_text()
    assert "capped at" in worker.log_text()
