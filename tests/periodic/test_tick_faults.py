"""A tick is claimed in its run's queue's slot, then its entry moved on in the schedule's:
a crash between the two, and processes racing for the same tick, still run it once."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import redis

import cogworker
from cogworker import Periodic
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import (
    TICK_CLAIM_TTL,
    Claim,
    ClaimResult,
    PeriodicStore,
    decode_entry,
    encode_entry,
)
from cogworker.app.worker.periodic_manager import PeriodicManager
from cogworker.domain import cron
from cogworker.domain.cron import Due
from tests.periodic import jobs
from tests.periodic.helpers import claim_of, entry
from tests.periodic.test_manager import Clock, queued
from tests.support.topology import plain_client
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

T = 1_800_000_000.0
EVERY_SECOND = Periodic(cron="* * * * * *", job=jobs.Tick, name="tick")
#: Hourly, on the hour: T is one of its ticks.
HOURLY = Periodic(cron="0 * * * *", job=jobs.Tick, name="tick")


class ProcessDiedError(Exception):
    """The process died right after its tick's script."""


@attrs.define
class _DiesAfterTick(PeriodicStore):
    """A process that dies between the tick's script and the entry's advance."""

    def advance(self, name: str, expected: bytes, entry: str) -> bool:
        raise ProcessDiedError


def manager(
    store: PeriodicStore, clock: Clock, periodic: Periodic, **options: Any
) -> PeriodicManager:
    """A periodic manager of `periodic` on `store`."""
    config = cogworker.Config(periodic=(periodic,), **options)
    return PeriodicManager(store, config, threading.Event(), logging.getLogger("test"), clock=clock)


def crash_after_the_tick(rc: redis.Redis, periodic: Periodic, clock: Clock) -> str:
    """A process claims T and enqueues its run, then dies before moving the entry on; the
    run's jid."""
    clock.now = T - 0.5
    assert manager(PeriodicStore(rc), clock, periodic).load()
    clock.now = T + 0.01
    manager(_DiesAfterTick(rc), clock, periodic).tend()
    [run] = queued(rc)
    assert claim_of(rc, "tick", T) == run["jid"]
    assert entry(rc, "tick")["last_tick"] is None  # type: ignore[index]
    return str(run["jid"])


def test_the_next_process_after_a_crash_between_tick_and_advance_moves_the_entry_on(
    rc: redis.Redis,
) -> None:
    """The tick was claimed and its run pushed, the entry left behind: the next process to
    see the tick due finds it taken, pushes nothing, and moves the entry past it."""
    clock = Clock()
    jid = crash_after_the_tick(rc, EVERY_SECOND, clock)
    manager(PeriodicStore(rc), clock, EVERY_SECOND).tend()
    assert [run["jid"] for run in queued(rc)] == [jid]
    stored = entry(rc, "tick")
    assert stored is not None
    assert stored["last_tick"] == T


def test_a_tick_left_behind_by_a_crash_is_not_caught_up_again_hours_later(
    rc: redis.Redis,
) -> None:
    """Hourly, catch-up "last": the only process died between tick and advance and comes
    back 50 minutes later, when T counts as missed and is caught up.  The claim is still
    there (it lasts until T can't be due any more, not 10 minutes): no second run."""
    clock = Clock()
    jid = crash_after_the_tick(rc, HOURLY, clock)
    later = 50 * 60.0
    assert rc.pttl(keys.periodic_tick("default", "tick", T)) > (later + 60) * 1000
    clock.now = T + later
    restarted = manager(PeriodicStore(rc), clock, HOURLY, periodic_catch_up="last")
    restarted.tend()
    assert [run["jid"] for run in queued(rc)] == [jid]
    stored = entry(rc, "tick")
    assert stored is not None
    assert stored["last_tick"] == T


def _claim(read: bytes, at: float, jid: str) -> Claim:
    """A claim of the tick `at` of the entry `read`, enqueueing `jid`."""
    stored = decode_entry(read)
    assert stored is not None
    due = Due(at=at, action="run")

    def ran(run: str | None) -> str:
        return encode_entry(cron.handled(stored, due, jid=run, next_run=at + 1))

    return Claim(
        name=stored.name, at=at, action="run", expected=read, if_enqueued=ran(jid),
        otherwise=ran(None), queue="default", payload=f'{{"jid": "{jid}"}}', jid=jid,
    )  # fmt: skip


def test_two_clients_racing_for_each_tick_enqueue_it_once(redis_url: str, rc: redis.Redis) -> None:
    """Two clients, each on its own connection, claim the same 50 ticks at the same moment
    (each having read the entry before either claimed): one run per tick, the other finds
    it taken or the entry moved on."""
    rc.hset(keys.PERIODIC_SCHEDULE, "tick", encode_entry(EVERY_SECOND.entry(T - 1)))
    clients = [plain_client(redis_url, socket_timeout=10.0) for _ in range(2)]
    stores = [PeriodicStore(client) for client in clients]
    start = threading.Barrier(2)

    def claim(store: PeriodicStore, read: bytes, at: float, jid: str) -> ClaimResult:
        start.wait(timeout=10)
        return store.claim(_claim(read, at, jid))

    try:
        with ThreadPoolExecutor(2) as pool:
            for tick in range(50):
                at = T + tick
                read = rc.hget(keys.PERIODIC_SCHEDULE, "tick") or b""
                jids = [f"{tick}-a", f"{tick}-b"]
                results = list(pool.map(claim, stores, [read, read], [at, at], jids))
                assert sorted(results) in (["enqueued", "stale"], ["enqueued", "taken"])
                rc.delete(keys.periodic_running("default", "tick"))  # the run ended
                assert claim_of(rc, "tick", at) == jids[results.index("enqueued")]
    finally:
        for client in clients:
            client.close()
    assert len(queued(rc)) == 50
    assert entry(rc, "tick")["last_tick"] == T + 49  # type: ignore[index]


def test_a_ticks_claim_lasts_at_least_as_long_as_before(rc: redis.Redis) -> None:
    """An every-second job's tick can't be due a minute later: its claim keeps the floor."""
    clock = Clock()
    crash_after_the_tick(rc, EVERY_SECOND, clock)
    assert rc.pttl(keys.periodic_tick("default", "tick", T)) > (TICK_CLAIM_TTL - 60) * 1000
