"""The heartbeat renews the periodic running locks its process holds: one `renew_lock` per
lock, in the lock's queue's slot, in the beat's round trip, only while the lock names the
run's jid."""

from __future__ import annotations

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:locks"
#: A lock's TTL before the beat, and the one the beat renews it for, milliseconds.
SHORT, RENEWED = 5_000, 60_000


def beat(rc: redis.Redis, held: list[tuple[str, str]]) -> list[str]:
    """One beat holding `held` (lock, jid), renewing each for RENEWED."""
    registry = ProcessRegistry(rc)
    reply = registry.beat(IDENTITY, {}, {}, 60, 1_700_000_000.0, held_locks=held, lock_ttl=60.0)
    return reply.signals


def test_a_beat_renews_the_locks_its_runs_hold_in_their_queues_slots(rc: redis.Redis) -> None:
    """Locks of runs on two queues, each held by its run: both last RENEWED from the beat."""
    mine = [(keys.periodic_running("default", "nightly"), "j1"),
            (keys.periodic_running("reports", "weekly"), "j2")]  # fmt: skip
    for lock, jid in mine:
        rc.set(lock, jid, px=SHORT)
    rc.rpush(keys.signal(IDENTITY), "quiet")
    assert beat(rc, mine) == ["quiet"]
    for lock, jid in mine:
        assert rc.get(lock) == jid.encode()
        assert SHORT < rc.pttl(lock) <= RENEWED


def test_a_lock_whose_holder_changed_or_that_is_gone_is_not_renewed(rc: redis.Redis) -> None:
    """The lock ran out and a later run took it, or it is gone: the beat leaves it as it is
    (renewing it would keep another run's lock alive, or bring back a released one)."""
    taken = keys.periodic_running("default", "nightly")
    gone = keys.periodic_running("default", "hourly")
    rc.set(taken, "later-run", px=SHORT)
    beat(rc, [(taken, "j1"), (gone, "j2")])
    assert rc.get(taken) == b"later-run"
    assert 0 < rc.pttl(taken) <= SHORT
    assert not rc.exists(gone)
    assert rc.hget(keys.process(IDENTITY), "beat") is not None
