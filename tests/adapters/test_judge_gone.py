"""judge_gone: a process is gone after two looks a threshold apart, on its node's clock."""

from __future__ import annotations

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.worker.reconciler import Reconciler
from cogworker.exceptions import ConfigError
from tests.support.processes import wait_until
from tests.support.reconcilers import reconciler
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

#: Far from every age drawn below: a look's own duration never crosses it.
THRESHOLD = 10.0
JOB = b'{"jid":"j1","class":"app.Job","queue":"default"}'

#: An age well inside the threshold, or well past it (seconds); None: no such stamp.
ages = st.none() | st.floats(0, 0.4 * THRESHOLD) | st.floats(1.5 * THRESHOLD, 100 * THRESHOLD)


def _redis_now(rc: redis.Redis) -> float:
    seconds, micros = rc.time()
    return float(seconds) + micros / 1_000_000


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(beat_age=ages, mark_age=ages)
def test_one_look_decides_by_the_beat_and_the_mark(
    rc: redis.Redis, beat_age: float | None, mark_age: float | None
) -> None:
    """A fresh beat is alive and clears the mark; an old or missing one is only suspect
    until a mark a threshold old, with no beat since, stands: then gone, its presence keys
    deleted (the mark kept, for a caller that crashes before the requeues)."""
    rc.flushdb()
    now = _redis_now(rc)
    if beat_age is not None:
        rc.hset(keys.process("p"), "beat", f"{now - beat_age:.6f}")
        rc.hset(keys.workers("p"), "t", "{}")
    written = None if mark_age is None else f"{now - mark_age:.6f}".encode()
    if written is not None:
        rc.set(keys.suspect("p"), written)
    verdict = ProcessRegistry(rc).judge_gone("p", THRESHOLD, 600)
    mark = rc.get(keys.suspect("p"))

    if beat_age is not None and beat_age < THRESHOLD:
        assert (verdict, mark) == ("alive", None)
        assert rc.exists(keys.process("p"))
    elif mark_age is None or (beat_age is not None and beat_age <= mark_age):
        assert verdict == "suspect"  # marked now: the verdict waits a threshold from here
        assert mark is not None
        assert float(mark) >= now
        assert 0 < rc.ttl(keys.suspect("p")) <= 600
    elif mark_age < THRESHOLD:
        assert (verdict, mark) == ("suspect", written)
    else:
        assert verdict == ("gone" if beat_age is not None else "gone already")
        assert not rc.exists(keys.process("p"), keys.workers("p"))
        assert mark == written


def test_the_verdict_takes_two_looks_a_threshold_apart(rc: redis.Redis) -> None:
    """A process stops beating: looks answer alive, then suspect (its beat a threshold
    old), and only a threshold after the mark, gone."""
    registry, threshold = ProcessRegistry(rc), 0.4
    registry.beat("dying", {}, {}, 60, 0.0, fetched_from=["default"])
    seen: list[str] = []

    def judged(wanted: str) -> bool:
        verdict = registry.judge_gone("dying", threshold, 60)
        if not seen or seen[-1] != verdict:
            seen.append(verdict)
        return verdict == wanted

    wait_until(lambda: judged("suspect"), 10.0)
    marked = float(rc.get(keys.suspect("dying")) or 0)
    wait_until(lambda: judged("gone"), 10.0)
    assert seen[-2:] == ["suspect", "gone"]
    assert _redis_now(rc) - marked >= threshold
    assert not rc.exists(keys.process("dying"))
    assert registry.judge_gone("dying", threshold, 60) == "gone already"


def test_a_beat_after_the_mark_clears_it(rc: redis.Redis) -> None:
    """Every beat looks old after the node was frozen or down: the first look only marks,
    and the process's next beat (within the threshold) deletes the mark."""
    registry = ProcessRegistry(rc)
    registry.beat("live", {}, {}, 60, 0.0)
    rc.hset(keys.process("live"), "beat", f"{_redis_now(rc) - 3 * THRESHOLD:.6f}")  # the freeze
    assert registry.judge_gone("live", THRESHOLD, 60) == "suspect"
    reply = registry.beat("live", {}, {}, 60, 0.0)
    assert reply.found
    assert reply.suspected
    assert not rc.exists(keys.suspect("live"))
    assert registry.judge_gone("live", THRESHOLD, 60) == "alive"


def test_a_beat_tells_a_verdict_from_an_expired_hash(rc: redis.Redis) -> None:
    """A beat after a verdict (its mark standing), or after the whole recovery (the process
    unregistered), finds its presence taken; a hash that only expired (Redis down past its
    TTL) is not a verdict.  A first beat finds no presence either (its caller knows)."""
    registry = ProcessRegistry(rc)
    assert registry.beat("p", {}, {}, 60, 0.0).presence_taken
    assert not registry.beat("p", {}, {}, 60, 0.0).presence_taken
    assert registry.judge_gone("p", 0.0, 60) == "suspect"
    assert registry.judge_gone("p", 0.0, 60) == "gone"
    assert registry.beat("p", {}, {}, 60, 0.0).presence_taken  # the verdict's mark
    assert registry.judge_gone("p", 0.0, 60) == "suspect"
    assert registry.judge_gone("p", 0.0, 60) == "gone"
    registry.unregister("p")
    assert not rc.exists(keys.suspect("p"))
    assert registry.beat("p", {}, {}, 60, 0.0).presence_taken  # unregistered
    assert rc.sismember(keys.PROCESSES, "p")
    rc.delete(keys.process("p"))  # its TTL ran out, no verdict
    reply = registry.beat("p", {}, {}, 60, 0.0)
    assert not reply.found
    assert not reply.presence_taken


def _reconciler(rc: redis.Redis) -> Reconciler:
    return reconciler(
        rc, cogworker.Config(heartbeat_interval=0.1, orphan_threshold=0.4, max_orphanings=3)
    )


def test_a_crash_between_the_verdict_and_the_requeue_is_finished_later(
    rc: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """The verdict alone (its caller stopped before the requeue): the process stays
    registered, its list whole; the next reconciler's pass requeues the list, counting the
    orphaning, then unregisters it; a pass after that finds nothing to do.  The verdict
    is said by the one that gave it, the requeue by the one that did it: once each."""
    registry = ProcessRegistry(rc)
    registry.beat("crashed", {}, {}, 60, 0.0, fetched_from=["default"])
    rc.lpush(keys.in_progress("default", "crashed"), JOB)
    threshold = _reconciler(rc).config.orphan_threshold
    wait_until(lambda: registry.judge_gone("crashed", threshold, 60) == "gone", 10.0)
    assert rc.sismember(keys.PROCESSES, "crashed")
    assert rc.llen(keys.in_progress("default", "crashed")) == 1

    reconciler = _reconciler(rc)
    assert reconciler.recover_orphans() == 1
    assert rc.lrange(keys.queue("default"), 0, -1) == [JOB]
    assert rc.get(keys.orphanings("default", "j1")) == b"1"
    assert not rc.sismember(keys.PROCESSES, "crashed")
    assert reconciler.recover_orphans() == 0
    assert rc.llen(keys.queue("default")) == 1
    said = [record.getMessage() for record in caplog.records]
    assert said == ["1 jobs of gone process crashed requeued, 0 orphaned too often"]


def test_recovery_judges_then_requeues_then_unregisters(rc: redis.Redis) -> None:
    """A registered process that stopped beating: its jobs come back only after the
    verdict (a pass that marks it requeues nothing), then it leaves the registry."""
    registry, reconciler = ProcessRegistry(rc), _reconciler(rc)
    registry.beat("dying", {}, {}, 60, 0.0, fetched_from=["default"])
    rc.lpush(keys.in_progress("default", "dying"), JOB)
    wait_until(lambda: rc.exists(keys.suspect("dying")) or reconciler.recover_orphans(), 10.0)
    assert rc.llen(keys.in_progress("default", "dying")) == 1  # marked, not yet judged
    assert wait_until(reconciler.recover_orphans, 10.0) == 1
    assert rc.lrange(keys.queue("default"), 0, -1) == [JOB]
    assert not rc.sismember(keys.PROCESSES, "dying")


def test_a_heartbeat_interval_at_the_threshold_is_refused() -> None:
    """Beats must come more often than the threshold, or every process would look gone."""
    with pytest.raises(ConfigError, match="heartbeat_interval"):
        cogworker.Config(heartbeat_interval=60.0, orphan_threshold=60.0)
