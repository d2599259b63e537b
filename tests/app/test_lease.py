"""The lease, and a heartbeat learning its process was declared gone (a real Redis)."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.worker.heartbeat import Heartbeat
from cogworker.app.worker.lease import Lease, may_start, may_start_on_loop
from cogworker.app.worker.state import WorkerState
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:lease"
JOB = Fetched(queue="default", raw=b'{"jid":"j1","class":"app.Job","queue":"default"}')


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_lease_is_held_for_its_length_from_the_beat_s_sending() -> None:
    """Not held before a beat; held from the beat's sending for less than its length."""
    clock = Clock()
    lease = Lease(10.0, clock)
    assert not lease.held()
    lease.renew(95.0)
    assert lease.held()
    clock.now = 105.0
    assert not lease.held()
    lease.renew(90.0)  # a late reply of an older beat renews nothing
    assert not lease.held()


def test_a_start_waits_for_the_lease() -> None:
    """Without the lease a start waits: a stop ends the wait with no start (the job stays
    for the shutdown requeue); a beat landing lets a waiting start go on; a job the
    process let go of doesn't start."""
    clock = Clock()
    state = WorkerState(identity=IDENTITY, lease=Lease(10.0, clock))
    state.hold(JOB.raw)
    state.stopping.set()
    assert not may_start(state, JOB, logging.getLogger("t"))
    state.stopping.clear()
    answers: list[bool] = []
    waiting = threading.Thread(
        target=lambda: answers.append(may_start(state, JOB, logging.getLogger("t")))
    )
    waiting.start()
    state.lease.renew(clock.now)
    waiting.join(10.0)
    assert answers == [True]
    state.let_go_of_all()
    assert not may_start(state, JOB, logging.getLogger("t"))


def test_a_start_on_the_event_loop_waits_for_the_lease_on_a_thread() -> None:
    """On the loop: without the lease the start waits while the loop goes on running
    other work; a beat landing lets it go on; a job the process let go of doesn't start,
    and with the lease held that is answered at once."""
    clock = Clock()
    state = WorkerState(identity=IDENTITY, lease=Lease(10.0, clock))
    state.hold(JOB.raw)
    logger = logging.getLogger("t")

    async def wait_then_beat() -> tuple[bool, int]:
        waiting = asyncio.ensure_future(may_start_on_loop(state, JOB, logger))
        turns = 0
        while turns < 20 and not waiting.done():
            await asyncio.sleep(0.01)  # the loop turns while the start waits
            turns += 1
        state.lease.renew(clock.now)
        return await asyncio.wait_for(waiting, 10.0), turns

    assert asyncio.run(wait_then_beat()) == (True, 20)
    state.let_go_of_all()
    assert not asyncio.run(may_start_on_loop(state, JOB, logger))


def _heartbeat(rc: redis.Redis, on_gone: list[str], fail: bool = False) -> Heartbeat:
    def declared_gone() -> None:
        on_gone.append("called")
        if fail:
            raise redis.ConnectionError("Redis away")

    config = cogworker.Config(heartbeat_interval=0.1, orphan_threshold=1.0)
    state = WorkerState(identity=IDENTITY, lease=Lease(config.orphan_threshold))
    heartbeat = Heartbeat(
        ProcessRegistry(rc), config, state, logging.getLogger("t"), lambda signal: None
    )
    heartbeat.on_declared_gone = declared_gone
    return heartbeat


def _declared_gone(rc: redis.Redis) -> None:
    """A recovery's verdict (a threshold of 0: two looks in a row)."""
    registry = ProcessRegistry(rc)
    assert registry.judge_gone(IDENTITY, 0.0, 60) == "suspect"
    assert registry.judge_gone(IDENTITY, 0.0, 60) == "gone"


def test_a_beat_finding_its_hash_gone_acts_before_the_lease_is_renewed(
    rc: redis.Redis,
) -> None:
    """The first beat registers; a later one that finds its presence taken by a verdict
    calls `on_declared_gone` once, then renews the lease; a hash that only expired doesn't."""
    calls: list[str] = []
    heartbeat = _heartbeat(rc, calls)
    heartbeat.beat()
    heartbeat.beat()
    rc.delete(keys.process(IDENTITY))  # its TTL ran out (Redis down that long), no verdict
    heartbeat.beat()
    assert calls == []
    _declared_gone(rc)
    heartbeat.beat()
    assert calls == ["called"]
    assert heartbeat.state.lease.held()
    heartbeat.beat()
    assert calls == ["called"]


def test_a_failed_letting_go_is_tried_again_and_holds_the_lease_back(rc: redis.Redis) -> None:
    """`on_declared_gone` failing (Redis away): the beat fails, the lease stays run out, and
    the next beat (whose hash is there again) tries again."""
    calls: list[str] = []
    heartbeat = _heartbeat(rc, calls, fail=True)
    heartbeat.beat()
    heartbeat.state.lease = Lease(1.0)  # run out, as after a pause
    _declared_gone(rc)
    with pytest.raises(redis.ConnectionError):
        heartbeat.beat()
    assert not heartbeat.state.lease.held()
    with pytest.raises(redis.ConnectionError):
        heartbeat.beat()
    assert calls == ["called", "called"]
