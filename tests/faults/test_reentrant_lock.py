"""Issue 16 #9: a `while_executing` job recovered after a crash takes its own dead run's lock."""

from __future__ import annotations

from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.run import RunStore
from tests.faults import oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.faults.jobs_reentrant import ExclusiveAtGate
from tests.support.processes import wait_until


def test_a_recovered_while_executing_job_runs_at_once_despite_its_own_lock(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    tmp_path: Path,
) -> None:
    """kill -9 mid-run: recovered by another worker, it runs again promptly, not put back."""
    victim = start_worker()
    registered(inspect, 1)
    gate = tmp_path / "gate"  # opened after the kill: the first run can't end before it
    jid = client.enqueue(ExclusiveAtGate, str(gate))
    assert jid is not None
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=victim.log_tail)
    survivor = start_worker()
    registered(inspect, 2)
    victim.kill()
    gate.touch()
    # The lock's TTL is the default hour: only taking it again lets the job run now.
    wait_until(lambda: jid in oracle.finished(oracle_file), 60, message=survivor.log_tail)
    stop_all(survivor)
    assert starts_of(oracle_file, jid) == 2
    assert "a duplicate is running" not in survivor.log_text()
    oracle.assert_each_in_one_place(inspect, [jid], done={jid})
    oracle.assert_nothing_left_behind(inspect)
    assert inspect.keys(keys.unique_lock("*", "*")) == []


def test_a_lock_is_taken_again_by_its_holder_only(inspect: redis.Redis) -> None:
    """The holder's jid takes its lock again (its TTL renewed); another jid is refused."""
    store = RunStore(inspect)
    assert store.take_lock("cogworker:unique:r", "jid-a", 5)
    assert store.take_lock("cogworker:unique:r", "jid-a", 600)
    assert 5_000 < inspect.pttl("cogworker:unique:r") <= 600_000
    assert not store.take_lock("cogworker:unique:r", "jid-b", 600)
    assert inspect.get("cogworker:unique:r") == b"jid-a"


def test_a_lock_ttl_beyond_a_century_is_held_for_a_century(inspect: redis.Redis) -> None:
    """A payload's TTL of 1e300 s takes the lock (for a century) instead of failing the start."""
    store = RunStore(inspect)
    assert store.take_lock("cogworker:unique:far", "jid-a", 1e300)
    assert inspect.pttl("cogworker:unique:far") > 99 * 365 * 86_400_000
