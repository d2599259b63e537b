"""Batches on a real Redis: the settling scripts append members' events, the fold counts
each member once, and a fold cut short at any point fires each callback exactly once."""

from __future__ import annotations

import contextlib
import json

import attrs
import pytest
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_store import FINISHED_TTL, BatchStore, Folded
from cogworker.adapters.dashboard_removal import Removal
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.handover import HandoverStore, parse_handover_record
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.app.batch_folding import fold_queue
from cogworker.domain import batches
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:test"
NOW = 1_800_000_000.0
BID = "b1"


def _payload(jid: str, queue: str = "work", bid: str = BID) -> bytes:
    return json.dumps(
        {"class": "app.Work", "args": [], "jid": jid, "queue": queue, "bid": bid}
    ).encode()


def _callback(name: batches.Callback) -> str:
    jid = batches.callback_jid(BID, name)
    return json.dumps({"class": f"app.On{name}", "args": [BID], "jid": jid, "queue": "cb"})


def _batch(rc: redis.Redis, members: int) -> BatchStore:
    """A batch of `members` jids m0, m1, ..., with both callbacks, closed."""
    store = BatchStore(rc)
    assert store.open(BID, {name: _callback(name) for name in batches.CALLBACKS}, NOW)
    assert store.join(BID, [f"m{n}" for n in range(members)]) == 1
    store.close(BID, "cb")
    return store


def _settle(rc: redis.Redis, jid: str, kind: str) -> bool:
    raw = _payload(jid)
    rc.lpush(keys.in_progress("work", IDENTITY), raw)
    outcome = OutcomeRecord(kind=kind, jid=jid, class_name="app.Work", payload="{}")  # type: ignore[arg-type]
    order = SettleOrder(fetched=Fetched(queue="work", raw=raw), outcome=outcome)
    return SettleStore(rc).settle_many(IDENTITY, [order], NOW) == [True]


def _pushed(rc: redis.Redis) -> list[str]:
    return sorted(json.loads(raw)["jid"] for raw in rc.lrange(keys.queue("cb"), 0, -1))


def _fold_all(store: BatchStore) -> None:
    for queue in ("cb", "work"):
        fold_queue(store, queue, lambda: NOW)


def test_final_outcomes_append_events_and_retries_do_not(rc: redis.Redis) -> None:
    """An ack and a death append their member's event; a retry (not final) appends none."""
    for jid, kind in (("m0", "ack"), ("m1", "retry"), ("m2", "dead")):
        assert _settle(rc, jid, kind)
    assert rc.lrange(keys.batch_events("work"), 0, -1) == [b"b1 m0 ack", b"b1 m2 dead"]


def test_a_job_of_no_batch_appends_nothing(rc: redis.Redis) -> None:
    """Plain jobs keep their plain path: nothing appended anywhere."""
    raw = b'{"class":"app.Work","args":[],"jid":"p1","queue":"work"}'
    rc.lpush(keys.in_progress("work", IDENTITY), raw)
    plain = OutcomeRecord(kind="ack", jid="p1", class_name="app.Work", history_per_job=False)
    order = SettleOrder(fetched=Fetched(queue="work", raw=raw), outcome=plain)
    assert SettleStore(rc).settle_many(IDENTITY, [order], NOW) == [True]
    assert rc.exists(keys.batch_events("work")) == 0


def test_a_repeat_orphan_buried_and_a_hand_over_keep_their_batch(rc: redis.Redis) -> None:
    """Buried in dead, a member appends its death; a handed-over settlement names its batch."""
    parked = keys.repeat_orphans("work")
    rc.rpush(parked, _payload("m0"))
    assert RecoverStore(rc).bury(parked, "list", _payload("m0"), "{}", NOW, jid="m0", queue="work")
    assert rc.lrange(keys.batch_events("work"), 0, -1) == [b"b1 m0 dead"]
    rc.lpush(keys.in_progress("work", IDENTITY), _payload("m1"))
    handovers = HandoverStore(SettleStore(rc))
    assert handovers.hand_over(
        IDENTITY, Fetched(queue="work", raw=_payload("m1")), OutcomeRecord(kind="ack", jid="m1")
    )
    (unsettled,) = handovers.unsettled()
    assert (unsettled.key, len(unsettled.entries)) == (keys.unsettled("work"), 1)
    outcome = parse_handover_record(unsettled.entries[0])
    assert outcome is not None
    assert (outcome.bid, outcome.queue) == (BID, "work")
    assert handovers.settle_handed_over(unsettled.key, unsettled.entries[0], outcome, NOW)
    assert rc.lrange(keys.batch_events("work"), 0, -1) == [b"b1 m0 dead", b"b1 m1 ack"]


def test_a_member_killed_or_deleted_on_the_dashboard_ends_there(rc: redis.Redis) -> None:
    """Killed from Retries: dead; deleted from Scheduled: discarded (removed for good)."""
    sets = SetStore(rc, Retention())
    rc.zadd(keys.retry("work"), {_payload("m0"): NOW})
    rc.zadd(keys.schedule("work"), {_payload("m1"): NOW})
    killed = Removal(entry=_payload("m0"), jid="m0", queue="work")
    assert sets.kill(keys.retry("work"), "work", [killed], NOW) == [True]
    deleted = Removal(entry=_payload("m1"), jid="m1", queue="work")
    assert sets.delete(keys.schedule("work"), "work", [deleted]) == [True]
    assert rc.lrange(keys.batch_events("work"), 0, -1) == [b"b1 m0 dead", b"b1 m1 discard"]


def test_each_member_counts_once_and_strangers_not_at_all(rc: redis.Redis) -> None:
    """A member settled twice (run again after a lost ack) counts once; a jid that never
    joined counts nothing; callbacks fire when the last member ends."""
    store = _batch(rc, 2)
    for event in ("b1 m0 ack", "b1 m0 dead", "b1 stranger ack"):
        rc.rpush(keys.batch_events("work"), event)
    _fold_all(store)
    status = store.status(BID)
    assert status is not None
    assert (status.settled, status.pending, _pushed(rc)) == (1, 1, [])
    rc.rpush(keys.batch_events("work"), "b1 m1 ack")
    _fold_all(store)
    assert _pushed(rc) == ["b1-complete", "b1-success"]
    assert 0 < rc.ttl(keys.batch(BID)) <= FINISHED_TTL
    assert rc.llen(keys.batch_events("work")) == rc.llen(keys.batch_events("cb")) == 0


def test_a_closed_or_unknown_batch_takes_no_member(rc: redis.Redis) -> None:
    """Joining is refused once closed (0) and for a batch that isn't there (-1)."""
    store = _batch(rc, 1)
    _fold_all(store)
    assert store.join(BID, ["late"]) == 0
    assert store.join("nope", ["late"]) == -1


class CrashError(Exception):
    """The process died here."""


@attrs.define
class CrashingStore(BatchStore):
    """A real store whose process dies before its `at`-th write of a fold (0: never)."""

    at: int = 0
    writes: int = 0

    def _step(self) -> None:
        self.writes += 1
        if self.writes == self.at:
            raise CrashError

    def fold(self, event: batches.BatchEvent) -> Folded | None:
        self._step()
        return super().fold(event)

    def fire(self, queue: str, jid: str, body: str) -> bool:
        self._step()
        return super().fire(queue, jid, body)

    def mark(self, bid: str, fired: batches.Callback | None, finished: bool) -> None:
        self._step()
        super().mark(bid, fired, finished)

    def done(self, queue: str, event: bytes) -> None:
        self._step()
        super().done(queue, event)


#: The writes of folding the closing (fold, removal), then the last member's event (fold,
#: push and note of each callback, removal); 9 is none (the fold runs through).
WRITES = 8


@pytest.mark.parametrize("crash_at", range(1, WRITES + 2))
def test_a_fold_cut_short_anywhere_fires_each_callback_once(rc: redis.Redis, crash_at: int) -> None:
    """Die before any write of the fold (fold, push, note, removal, for the closing and for
    the last member's event), then fold again: both callbacks pushed exactly once."""
    store = _batch(rc, 1)
    rc.rpush(keys.batch_events("work"), "b1 m0 ack")
    crashing = CrashingStore(rc, at=crash_at)
    with contextlib.suppress(CrashError):
        _fold_all(crashing)
    assert crashing.writes == min(crash_at, WRITES)
    _fold_all(store)
    _fold_all(store)
    assert _pushed(rc) == ["b1-complete", "b1-success"]
    status = store.status(BID)
    assert status is not None
    assert status.fired == {"success", "complete"}
