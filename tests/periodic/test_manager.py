"""The periodic manager in-process, on a real Redis with a clock of the test's own."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import attrs
import pytest
import redis

import cogworker
from cogworker import Periodic
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import PeriodicStore, decode_entry, encode_entry
from cogworker.app.middleware import Push
from cogworker.app.worker import periodic_manager
from cogworker.app.worker.periodic_manager import PeriodicManager
from cogworker.domain.job import JobRecord
from tests.periodic import jobs
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

T = 1_800_000_000.0
EVERY_SECOND = Periodic(cron="* * * * * *", job=jobs.Tick, name="tick", args=[7])


@attrs.define
class Clock:
    """A clock the test moves by hand."""

    now: float = T

    def __call__(self) -> float:
        return self.now


def manager(rc: redis.Redis, clock: Clock, **options: Any) -> PeriodicManager:
    """A periodic manager for a config of EVERY_SECOND (and `options`)."""
    config = cogworker.Config(periodic=(EVERY_SECOND,), **options)
    return PeriodicManager(
        PeriodicStore(rc), config, threading.Event(), logging.getLogger("test"), clock=clock
    )


def queued(rc: redis.Redis) -> list[dict[str, Any]]:
    """The payloads on the default queue, oldest first."""
    return [json.loads(raw) for raw in reversed(rc.lrange(keys.queue("default"), 0, -1))]


def stored(rc: redis.Redis, name: str = "tick") -> dict[str, Any]:
    """A stored entry as JSON."""
    return dict(json.loads(rc.hget(keys.PERIODIC_SCHEDULE, name) or b"null"))


@attrs.define
class _StaleOnce(PeriodicStore):
    """A store whose next read returns an older copy of the schedule (a slower process)."""

    old: dict[str, bytes] = attrs.field(factory=dict)

    def schedule(self) -> dict[str, bytes]:
        return self.old

    def schedule_and_epoch(self) -> tuple[dict[str, bytes], str | None]:
        return self.old, super().schedule_and_epoch()[1]


def test_two_processes_on_the_same_tick_enqueue_it_once(rc: redis.Redis) -> None:
    """Both see the tick due; one enqueues it, the other finds the entry changed and looks
    again soon, then finds nothing left to do."""
    clock = Clock(T - 0.5)
    first, second = manager(rc, clock), manager(rc, clock)
    assert first.load()
    assert second.load()
    clock.now = T + 0.01
    read_by_second = PeriodicStore(rc).schedule()
    assert first.tend() == pytest.approx(1 - 0.01 + periodic_manager.MARGIN)
    # The second read the schedule before the first's claim: its claim is stale.
    second.store = _StaleOnce(rc, read_by_second)
    assert second.tend() == periodic_manager.RECHECK
    second.store = PeriodicStore(rc)
    assert second.tend() == pytest.approx(1 - 0.01 + periodic_manager.MARGIN)
    [job] = queued(rc)
    assert job["args"] == [7]
    assert job["periodic"] == "tick"
    assert job["running_lock"] == keys.periodic_running("default", "tick")
    assert job["periodic_at"] == T
    assert stored(rc)["last_jid"] == job["jid"]


def test_a_tick_lands_on_a_paused_queue(rc: redis.Redis, redis_url: str) -> None:
    """A pause stops workers taking from the queue, not the schedule putting runs on it."""
    pauser = cogworker.Client(cogworker.Config(redis_url=redis_url))
    pauser.pause("default")
    pauser.close()
    clock = Clock(T - 0.5)
    ticking = manager(rc, clock)
    assert ticking.load()
    clock.now = T + 0.01
    ticking.tend()
    [job] = queued(rc)
    assert job["periodic"] == "tick"


def test_client_middleware_sees_the_run_and_may_stop_it(rc: redis.Redis) -> None:
    """A client middleware can add to the payload; one that stops the push leaves the tick
    handled with no run, not tried again."""
    seen: list[JobRecord] = []

    def tag(job: JobRecord, push: Push) -> str | None:
        seen.append(job)
        if len(seen) == 2:
            return None
        return push(attrs.evolve(job, extra={**job.extra, "tenant": "acme"}))

    clock = Clock(T - 0.5)
    tending = manager(rc, clock, client_middleware=(tag,))
    assert tending.load()
    clock.now = T + 0.1
    tending.tend()
    clock.now = T + 1.1
    tending.tend()
    tending.tend()
    [job] = queued(rc)
    assert (job["tenant"], job["periodic_at"]) == ("acme", T)
    assert len(seen) == 2
    assert stored(rc)["last_tick"] == T + 1
    assert stored(rc)["last_run"] == T


def test_a_config_without_periodic_jobs_leaves_the_schedule_alone(rc: redis.Redis) -> None:
    """Only a config with periodic jobs replaces the stored schedule."""
    rc.hset(keys.PERIODIC_SCHEDULE, "kept", "whatever")
    bare = PeriodicManager(
        PeriodicStore(rc), cogworker.Config(), threading.Event(), logging.getLogger("test")
    )
    assert bare.load()
    assert rc.hgetall(keys.PERIODIC_SCHEDULE) == {b"kept": b"whatever"}


@pytest.mark.parametrize(("replace", "kept"), [(True, False), (False, True)])
def test_an_unreadable_stored_entry_is_reported_once_and_the_rest_go_on(
    rc: redis.Redis, caplog: pytest.LogCaptureFixture, replace: bool, kept: bool
) -> None:
    """Damaged JSON or an unknown time zone: logged once, never run; replace removes it,
    merge keeps it; the other entries run."""
    good = manager(rc, Clock(T - 1)).config.periodic[0].entry(T - 1)
    bad_zone = attrs.evolve(good, name="bad-zone", tz="Nowhere/Special")
    rc.hset(keys.PERIODIC_SCHEDULE, "damaged", "{not json")
    rc.hset(keys.PERIODIC_SCHEDULE, "bad-zone", encode_entry(bad_zone))
    clock = Clock(T - 0.5)
    tending = manager(rc, clock, periodic_replace=replace)
    assert tending.load()
    clock.now = T + 0.1
    with caplog.at_level(logging.ERROR, logger="test"):
        tending.tend()
        rc.delete(keys.periodic_running("default", "tick"))  # the first run has ended
        clock.now = T + 1.1
        tending.tend()
    names = {name.decode() for name in rc.hkeys(keys.PERIODIC_SCHEDULE)}
    assert names == ({"tick", "damaged", "bad-zone"} if kept else {"tick"})
    assert len(queued(rc)) == 2
    reports = [r.getMessage() for r in caplog.records if "is ignored" in r.getMessage()]
    assert len(reports) == (2 if kept else 0)
    if kept:
        assert any("unknown time zone 'Nowhere/Special'" in report for report in reports)


def test_a_middleware_that_raises_is_logged_and_the_loop_goes_on(
    rc: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception from user code in the push is logged with the job's name; nothing is
    enqueued and the tick is tried again on the next look."""
    calls: list[int] = []

    def flaky(job: JobRecord, push: Push) -> str | None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("middleware bug")
        return push(job)

    clock = Clock(T - 0.5)
    tending = manager(rc, clock, client_middleware=(flaky,))
    assert tending.load()
    clock.now = T + 0.1
    with caplog.at_level(logging.ERROR, logger="test"):
        assert tending.tend() == periodic_manager.MAX_PAUSE
    assert "periodic job tick: couldn't handle its ticks" in caplog.text
    assert queued(rc) == []
    tending.tend()
    assert [job["periodic_at"] for job in queued(rc)] == [T]


def test_entries_decode_after_a_worker_wrote_them(rc: redis.Redis) -> None:
    """What `load` writes is an entry again when read back."""
    tending = manager(rc, Clock())
    assert tending.load()
    raw = rc.hget(keys.PERIODIC_SCHEDULE, "tick")
    assert raw is not None
    entry = decode_entry(raw)
    assert entry is not None
    assert (entry.cron, entry.args, entry.added_at, entry.next_run) == (
        "* * * * * *",
        (7,),
        T,
        T + 1,
    )


def test_a_skipped_tick_says_whether_its_previous_run_waits_or_runs(
    rc: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """The running lock is taken at the enqueue: while the run waits in its queue a skipped
    tick says it is queued; once a worker took it (into its in-progress list, as a fetch
    moves it), that it still runs."""
    clock = Clock(T - 0.5)
    ticking = manager(rc, clock)
    assert ticking.load()
    clock.now = T + 0.01
    ticking.tend()
    [run] = queued(rc)
    with caplog.at_level(logging.INFO, logger="test"):
        clock.now = T + 1.01
        ticking.tend()
        rc.sadd(keys.PROCESSES, "host:1:feed")
        rc.lmove(keys.queue("default"), keys.in_progress("default", "host:1:feed"), "RIGHT", "LEFT")
        clock.now = T + 2.01
        ticking.tend()
    skips = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert skips == [
        f"periodic job tick: 2027-01-15T08:00:01Z skipped, its previous run {run['jid']} is "
        "still queued",
        "periodic job tick: 2027-01-15T08:00:02Z skipped, its previous run still runs",
    ]
