"""Recovery judges a process gone by its old heartbeat only while the others keep beating."""

from __future__ import annotations

import time

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.exceptions import ConfigError
from tests.support.processes import wait_until

THRESHOLD = 2.0  # long enough that no busy-machine pause between two calls spans it
GAP = 0.6
JOB = b'{"jid":"j1","class":"app.Job","queue":"default"}'


def _beat(registry: ProcessRegistry, identity: str) -> None:
    registry.beat(identity, {}, {}, 60, time.time(), beat_gap=GAP)


def _recover(store: RecoverStore, identity: str) -> tuple[int, int] | None:
    return store.recover(identity, threshold=THRESHOLD, max_orphanings=3, beat_gap=GAP)


def test_a_silence_of_everyone_is_an_outage_not_deaths(rc: redis.Redis) -> None:
    """Nobody beat for longer than the gap (Redis frozen, say): no one is judged gone; once
    beats resume, only a whole threshold later; then the process that stayed silent is."""
    registry, store = ProcessRegistry(rc), RecoverStore(rc)
    _beat(registry, "silent")
    rc.lpush(keys.in_progress("silent"), JOB)
    # The fault itself: nobody beats for longer than the threshold.
    time.sleep(THRESHOLD + 0.2)
    assert _recover(store, "silent") is None

    _beat(registry, "live")  # the first beat after the silence: beats resume now
    assert _recover(store, "silent") is None
    assert rc.llen(keys.in_progress("silent")) == 1

    def recovered() -> tuple[int, int] | None:
        _beat(registry, "live")
        return _recover(store, "silent")

    assert wait_until(recovered, 10.0, interval=0.1) == (1, 0)
    assert rc.lrange(keys.queue("default"), 0, -1) == [JOB]
    assert rc.llen(keys.in_progress("silent")) == 0


def test_while_others_beat_an_old_heartbeat_is_a_death(rc: redis.Redis) -> None:
    """One process stops beating, another keeps on: after the threshold it is recovered."""
    registry, store = ProcessRegistry(rc), RecoverStore(rc)
    _beat(registry, "live")
    _beat(registry, "dying")
    rc.lpush(keys.in_progress("dying"), JOB)
    assert _recover(store, "dying") is None  # its heartbeat is fresh

    def recovered() -> tuple[int, int] | None:
        _beat(registry, "live")
        return _recover(store, "dying")

    assert wait_until(recovered, 10.0, interval=0.1) == (1, 0)
    assert not rc.sismember(keys.PROCESSES, "dying")


def test_a_heartbeat_interval_at_the_threshold_is_refused() -> None:
    """Beats must come more often than the threshold, or every process would look gone."""
    with pytest.raises(ConfigError, match="heartbeat_interval"):
        cogworker.Config(heartbeat_interval=60.0, orphan_threshold=60.0)
    assert cogworker.Config().beat_gap == (5.0 + 60.0) / 2
