"""The periodic store on a real Redis: the claim script's answers and the start-up change."""

from __future__ import annotations

import json

import attrs
import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import (
    Claim,
    PeriodicStore,
    decode_entry,
    encode_entry,
)
from cogworker.domain.cron import ScheduleEntry, TickAction
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

TICK = 1_700_000_000.0
ENTRY = ScheduleEntry(
    name="cleanup",
    cron="* * * * * *",
    tz="UTC",
    class_name="app.jobs.Cleanup",
    queue="low",
    retry=3,
    args=(1, "two", [3], {"four": None}),
    added_at=TICK - 10,
    last_tick=TICK - 1,
)
AFTER = encode_entry(attrs.evolve(ENTRY, last_tick=TICK))
#: ENTRY once TICK enqueued the run "j1".
RAN = encode_entry(attrs.evolve(ENTRY, last_tick=TICK, last_run=TICK, last_jid="j1"))


@pytest.fixture
def store(rc: redis.Redis) -> PeriodicStore:
    """A store on the test's Redis, holding ENTRY."""
    rc.hset(keys.PERIODIC_SCHEDULE, ENTRY.name, encode_entry(ENTRY))
    return PeriodicStore(rc)


def claim(action: TickAction = "run", *, expected: bytes | None = None, jid: str = "j1") -> Claim:
    """A claim of TICK for ENTRY as stored, enqueueing `jid` onto "low"."""
    return Claim(
        name=ENTRY.name,
        at=TICK,
        action=action,
        expected=expected if expected is not None else encode_entry(ENTRY).encode(),
        if_enqueued=RAN.replace('"j1"', f'"{jid}"'),
        otherwise=AFTER,
        queue="low",
        payload=f'{{"jid": "{jid}"}}',
        jid=jid,
        lock_ttl=5.0,
    )


def test_a_free_tick_is_enqueued_with_its_running_lock(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """The run is pushed; the lock and the tick's claim name its jid; the entry moves on."""
    assert store.claim(claim()) == "enqueued"
    assert rc.lrange(keys.queue("low"), 0, -1) == [b'{"jid": "j1"}']
    assert rc.sismember(keys.QUEUES, "low")
    assert store.running(ENTRY.queue, ENTRY.name) == "j1"
    assert 0 < rc.pttl(keys.periodic_running(ENTRY.queue, ENTRY.name)) <= 5000
    assert rc.get(keys.periodic_tick(ENTRY.queue, ENTRY.name, TICK)) == b"j1"
    assert rc.ttl(keys.periodic_tick(ENTRY.queue, ENTRY.name, TICK)) > 0
    stored = json.loads(rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) or b"")
    assert (stored["last_tick"], stored["last_jid"]) == (TICK, "j1")


def test_a_claim_on_an_entry_that_changed_writes_nothing(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """The second of two processes that read the same entry finds it stale: no second push."""
    assert store.claim(claim()) == "enqueued"
    assert store.claim(claim()) == "stale"
    assert rc.llen(keys.queue("low")) == 1


def test_a_tick_claimed_already_is_taken_even_after_a_rewrite(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """The tick's claim key holds even when the entry was rewritten to an older last tick."""
    assert store.claim(claim()) == "enqueued"
    rc.delete(keys.periodic_running(ENTRY.queue, ENTRY.name))
    rc.hset(keys.PERIODIC_SCHEDULE, ENTRY.name, encode_entry(ENTRY))
    assert store.claim(claim()) == "taken"
    assert rc.llen(keys.queue("low")) == 1
    assert rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) == RAN.encode()


def test_the_run_is_stored_whichever_of_two_racing_processes_advances_first(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """A enqueues the tick's run, B (which read the same entry) finds the tick taken and
    advances first: the entry names A's run, and A's late advance is refused."""
    first, second = store, PeriodicStore(rc)
    assert first.tick(claim()) == "enqueued"
    assert second.claim(claim(jid="j2")) == "taken"
    assert not first.advance(ENTRY.name, encode_entry(ENTRY).encode(), RAN)
    assert rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) == RAN.encode()
    assert rc.lrange(keys.queue("low"), 0, -1) == [b'{"jid": "j1"}']


def test_a_tick_taken_without_a_run_keeps_the_previous_run(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """A skipped the tick (its previous run still held the lock); B, finding it taken,
    stores the tick handled with no run of its own."""
    rc.set(keys.periodic_running(ENTRY.queue, ENTRY.name), "previous")
    assert store.tick(claim()) == "skipped"
    assert PeriodicStore(rc).claim(claim(jid="j2")) == "taken"
    assert rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) == AFTER.encode()


def test_an_on_time_tick_is_skipped_while_the_previous_run_holds_the_lock(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """Lock held: nothing pushed, the tick is marked skipped and handled."""
    rc.set(keys.periodic_running(ENTRY.queue, ENTRY.name), "previous")
    assert store.claim(claim("run")) == "skipped"
    assert rc.llen(keys.queue("low")) == 0
    assert rc.get(keys.periodic_tick(ENTRY.queue, ENTRY.name, TICK)) == b"skipped"
    assert rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) == AFTER.encode()
    assert store.running(ENTRY.queue, ENTRY.name) == "previous"


def test_a_catch_up_tick_waits_while_the_previous_run_holds_the_lock(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """Lock held: a catch-up claim is "busy" and writes nothing; once free, it is enqueued."""
    rc.set(keys.periodic_running(ENTRY.queue, ENTRY.name), "previous")
    assert store.claim(claim("catch_up")) == "busy"
    assert rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) == encode_entry(ENTRY).encode()
    assert not rc.exists(keys.periodic_tick(ENTRY.queue, ENTRY.name, TICK))
    rc.delete(keys.periodic_running(ENTRY.queue, ENTRY.name))
    assert store.claim(claim("catch_up")) == "enqueued"


def test_a_drop_only_marks_the_tick_handled(store: PeriodicStore, rc: redis.Redis) -> None:
    """Dropped missed ticks: the entry moves on, nothing is pushed or locked."""
    assert store.claim(claim("drop")) == "dropped"
    assert rc.hget(keys.PERIODIC_SCHEDULE, ENTRY.name) == AFTER.encode()
    assert rc.llen(keys.queue("low")) == 0
    assert store.running(ENTRY.queue, ENTRY.name) is None


def test_a_claim_on_a_removed_entry_is_stale(store: PeriodicStore, rc: redis.Redis) -> None:
    """An entry another process's start-up removed is never run again by a process that read it."""
    rc.hdel(keys.PERIODIC_SCHEDULE, ENTRY.name)
    assert store.claim(claim()) == "stale"
    assert rc.llen(keys.queue("low")) == 0


def test_the_start_up_change_applies_only_to_the_schedule_it_read(
    store: PeriodicStore, rc: redis.Redis
) -> None:
    """Writes and deletes land when the schedule is as read; not after any change meanwhile."""
    read = store.schedule()
    rc.hset(keys.PERIODIC_SCHEDULE, "other", "x")
    assert not store.change(read, {"new": "n"}, [ENTRY.name])
    assert store.schedule() == {**read, "other": b"x"}
    assert store.change(store.schedule(), {"new": "n"}, [ENTRY.name, "other"])
    assert store.schedule() == {"new": b"n"}
    assert store.change(store.schedule(), {}, [])


def test_unreadable_entries_decode_to_none() -> None:
    """Damaged JSON, a missing field or a wrong type is not an entry."""
    good = json.loads(encode_entry(ENTRY))
    assert decode_entry(b"{not json") is None
    assert decode_entry(json.dumps({**good, "cron": 5})) is None
    assert decode_entry(json.dumps({k: v for k, v in good.items() if k != "queue"})) is None
    assert decode_entry(json.dumps({**good, "last_run": "yesterday"})) is None
    assert decode_entry(json.dumps({**good, "last_jid": 7})) is None
    assert decode_entry(json.dumps([good])) is None


@given(
    last_tick=st.none() | st.floats(1e9, 3e9),
    last_jid=st.none() | st.text(max_size=8),
    args=st.lists(st.integers() | st.text(max_size=5) | st.none(), max_size=4),
)
def test_entries_round_trip_through_their_json(
    last_tick: float | None, last_jid: str | None, args: list[object]
) -> None:
    """decode(encode(entry)) is the entry."""
    entry = attrs.evolve(ENTRY, last_tick=last_tick, last_jid=last_jid, args=tuple(args))
    assert decode_entry(encode_entry(entry)) == entry
