"""Which of the engine's writes and reads keep to one hash slot: the ratchet of issue #22.

Each operation runs through the adapters, as the worker, the client and the
dashboard call them, against a node in cluster mode that owns every slot:
it refuses a script or multi-key command whose keys span slots (CROSSSLOT),
as Redis Cluster does.  An operation keeps to one slot, or is listed in
`SPANS_SLOTS_TODAY` (docs/redis-cluster.md says where its keys go).  A
listed one that now keeps to one slot fails too: take it off the list, so
the list only shrinks, and is empty when cogworker runs on a cluster.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

import pytest
import redis
from redis.exceptions import ClusterCrossSlotError

from cogworker.adapters import job_records, liveness, queue_pause, results, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_store import BatchStore
from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.adapters.dashboard_removal import Removal
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.adapters.jid_index import JidIndex
from cogworker.adapters.jobs.cancel import CancelStore, Waiting
from cogworker.adapters.jobs.due import DueStore
from cogworker.adapters.jobs.enqueue import EnqueueStore, UniquePush
from cogworker.adapters.jobs.fetch import Fetched, FetchStore
from cogworker.adapters.jobs.handover import (
    HandoverStore,
    handover_record,
    parse_handover_record,
)
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.limit_store import LimitStore, spot_of
from cogworker.adapters.periodic_store import Claim, PeriodicStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.batch_folding import fold_queue
from cogworker.app.web import paging
from cogworker.app.web.cursor import Cursor
from cogworker.app.web.entries import Filter
from cogworker.domain import key_limits, payload
from cogworker.domain.job import JobRecord
from cogworker.domain.results import Kept

IDENTITY = "host:1:census"
NOW = 1_800_000_000.0
JID = "census-jid"
LIMIT = key_limits.Concurrency(max=2)

#: What still touches keys of several slots, by operation (docs/redis-cluster.md,
#: "Every script and its one slot", says what each becomes).  Empty since layout step 10:
#: the in-progress lists are per (process, queue), in their queue's slot, and a fetch over
#: several queues is a script per queue (the fetch plan).
SPANS_SLOTS_TODAY: frozenset[str] = frozenset()


def _raw(queue: str = "default", jid: str = JID) -> bytes:
    record = {"class": "app.Send", "args": [1], "jid": jid, "queue": queue, "retry": True}
    return json.dumps(record).encode()


def _held(rc: redis.Redis, queue: str = "default") -> Fetched:
    """A job on IDENTITY's in-progress list of `queue`, as a fetch left it."""
    rc.sadd(keys.process_queues(IDENTITY), queue)
    rc.lpush(keys.in_progress(queue, IDENTITY), _raw(queue))
    return Fetched(queue=queue, raw=_raw(queue))


def _settle(rc: redis.Redis, outcome: OutcomeRecord) -> None:
    SettleStore(rc).settle(IDENTITY, SettleOrder(fetched=_held(rc), outcome=outcome), NOW)


def _push_unique(rc: redis.Redis) -> None:
    lock = keys.unique_lock("default", "app.Send:default:x")
    push = UniquePush(queue="default", payload=_raw().decode(), jid=JID, lock=lock, ttl=60)
    EnqueueStore(rc).push_unique([push], NOW)


def _ack_batch(rc: redis.Redis) -> None:
    plain = OutcomeRecord(kind="ack", jid=JID, class_name="app.Send", history_per_job=False)
    SettleStore(rc).settle_many(IDENTITY, [SettleOrder(fetched=_held(rc), outcome=plain)], NOW)


def _retry_batch(rc: redis.Redis) -> None:
    """A plain retry in the acker's batch: its queue's retry_many, with a limit place."""
    place = keys.no_lock("default")
    retry = OutcomeRecord(
        kind="retry", jid=JID, class_name="app.Send", score=NOW, payload="{}", limit_place=place
    )
    SettleStore(rc).settle_many(IDENTITY, [SettleOrder(fetched=_held(rc), outcome=retry)], NOW)


def _fetch_two(rc: redis.Redis) -> None:
    """The first queue short: the other's length, then its fetch (the fetch plan)."""
    rc.lpush(keys.queue("default"), _raw())
    FetchStore(rc).fetch(IDENTITY, ["critical", "default"], 2)


def _pop_two(rc: redis.Redis) -> None:
    """The first queue short: the other's length, then its pop (the fetch plan)."""
    rc.lpush(keys.queue("default"), _raw())
    FetchStore(rc).pop(["critical", "default"], 2)


def _fetch_one(rc: redis.Redis) -> None:
    rc.lpush(keys.queue("default"), _raw())
    FetchStore(rc).fetch(IDENTITY, ["default"], 2)


def _fetch_blocking(rc: redis.Redis) -> None:
    rc.lpush(keys.queue("default"), _raw())
    FetchStore(rc).fetch_blocking(IDENTITY, "default", 1)


def _take_and_release(rc: redis.Redis) -> None:
    RunStore(rc).take_lock(keys.unique_lock("default", "x"), JID, 60)
    RunStore(rc).release_lock(keys.unique_lock("default", "x"), JID)


def _requeue_own(rc: redis.Redis) -> None:
    _held(rc)
    RecoverStore(rc).requeue_own(IDENTITY, ["critical"], max_handbacks=3)


def _recover(rc: redis.Redis) -> None:
    _held(rc)
    _held(rc, "critical")
    RecoverStore(rc).recover_all(IDENTITY, max_orphanings=3, forget=True)


def _file_handed_over(rc: redis.Redis) -> None:
    """A settlement handed over at a stop (as "hand over" left it), filed by a reconciler
    from its queue's list."""
    rc.sadd(keys.PARTS, "default")
    handed = OutcomeRecord(kind="ack", jid=JID, queue="default")
    rc.rpush(keys.unsettled("default"), handover_record(handed))
    handovers = HandoverStore(SettleStore(rc))
    (unsettled,) = handovers.unsettled()
    (record,) = unsettled.entries
    outcome = parse_handover_record(record)
    assert outcome is not None
    assert handovers.settle_handed_over(unsettled.key, record, outcome, NOW)


def _bury_parked(rc: redis.Redis) -> None:
    """A repeat orphan parked on its queue's list, filed in its queue's dead set."""
    rc.sadd(keys.PARTS, "default")
    rc.rpush(keys.repeat_orphans("default"), _raw())
    recovers = RecoverStore(rc)
    (parked,) = recovers.parked("repeat_orphans")
    assert recovers.bury(*parked.holder, _raw(), "{}", NOW, jid=JID, queue=parked.queue)


def _judge_gone(rc: redis.Redis) -> None:
    """Marked suspect, then (a threshold of 0 later) gone, then unregistered."""
    registry = ProcessRegistry(rc)
    registry.beat(IDENTITY, {}, {}, 60, NOW)
    assert registry.judge_gone(IDENTITY, 0, 60) == "suspect"
    assert registry.judge_gone(IDENTITY, 0, 60) == "gone"
    registry.unregister(IDENTITY)


def _move_due(rc: redis.Redis) -> None:
    rc.zadd(keys.schedule("default"), {_raw(): NOW})
    DueStore(rc).move_due(keys.schedule("default"), [(_raw(), "default", _raw().decode())])


def _bury_unreadable(rc: redis.Redis) -> None:
    """The poller files an entry of a queue's scheduled set that isn't a job in its dead."""
    rc.zadd(keys.schedule("default"), {b"not a job": NOW})
    problem = payload.PayloadError(problem=payload.PayloadProblem.BAD_FIELD, detail="census")
    holder: tuple[str, Literal["zset"]] = (keys.schedule("default"), "zset")
    RecoverStore(rc).bury_unreadable(
        holder, b"not a job", problem, jid="census-new", now=NOW, queue="default"
    )


def _cancel_scheduled(rc: redis.Redis) -> None:
    rc.zadd(keys.schedule("default"), {_raw(): NOW})
    job = JobRecord(class_name="app.Send", queue="default", jid=JID)
    waiting = Waiting(key=keys.schedule("default"), kind="zset", entry=_raw(), job=job)
    CancelStore(rc).remove(waiting, OutcomeRecord(kind="cancel", jid=JID, attempt="{}"), NOW)


def _kill_and_delete(rc: redis.Redis) -> None:
    """The dashboard kills a retrying job and deletes a dead one: a call per queue's set."""
    sets = SetStore(rc, Retention())
    rc.zadd(keys.retry("default"), {_raw(): NOW})
    removal = Removal(entry=_raw(), jid=JID, queue="default")
    sets.kill(keys.retry("default"), "default", [removal], NOW)
    sets.delete(keys.dead("default"), "default", [removal])


def _page_sets(rc: redis.Redis) -> None:
    """A page of the dead sets merged over queues, from a cursor: each command in one slot."""
    rc.sadd(keys.PARTS, "default", "critical")
    for queue in ("default", "critical"):
        rc.zadd(keys.dead(queue), {_raw(queue, jid): NOW for jid in ("a", "b")})
    sets = SetStore(rc, Retention())
    cursor = Cursor(score=NOW, key="a", tie=0, part="default")
    page = paging.page_of(sets, "dead", descending=True, cursor=cursor, where=Filter(), per=2)
    assert len(page.rows) == 2
    sets.total("dead")


def _beat(rc: redis.Redis) -> None:
    """A beat renewing a periodic run's running lock."""
    held = [(keys.periodic_running("default", "nightly"), JID)]
    ProcessRegistry(rc).beat(IDENTITY, {"rss_kb": 1}, {}, 60, NOW, held_locks=held)


def _pulse(rc: redis.Redis) -> None:
    rc.execute_command("EVAL", *liveness.pulse_eval(IDENTITY, ttl=60, stale_after=1))


def _cancel(rc: redis.Redis) -> None:
    rc.lpush(keys.queue("default"), _raw())
    waiting = Waiting(
        key=keys.queue("default"),
        kind="list",
        entry=_raw(),
        job=JobRecord(class_name="app.Send", queue="default", jid=JID),
    )
    CancelStore(rc).remove(waiting, OutcomeRecord(kind="cancel", jid=JID, attempt="{}"), NOW)


def _claim_tick(rc: redis.Redis) -> None:
    """The entry checked, the tick claimed and its run pushed, the entry moved on: each in
    its own slot."""
    rc.hset(keys.PERIODIC_SCHEDULE, "nightly", "{}")
    claim = Claim(
        name="nightly", at=NOW, action="run", expected=b"{}", if_enqueued="{}",
        otherwise="{}", queue="default", payload=_raw().decode(), jid=JID,
    )  # fmt: skip
    PeriodicStore(rc).claim(claim)


def _class_runs(rc: redis.Redis) -> None:
    """A class's runs read merged over two registered queues and the migrated part."""
    rc.sadd(keys.PARTS, "default", "critical")
    tracking.class_history(rc, "app.Send")


def _clear_queue(rc: redis.Redis) -> None:
    """A job holding both kinds of lock, and one holding none (placeholders in their stead)."""
    rc.lpush(keys.queue("default"), _raw(), _raw(jid="plain"))
    locked = Removal(
        entry=_raw(), jid=JID, queue="default",
        unique_lock=keys.unique_lock("default", "app.Send:default:x"),
        running_lock=keys.periodic_running("default", "nightly"),
    )  # fmt: skip
    plain = Removal(entry=_raw(jid="plain"), jid="plain", queue="default")
    QueueStore(rc).delete("default", [locked, plain], clearing=True)


def _limit_place(rc: redis.Redis) -> None:
    store = LimitStore(rc)
    spot = spot_of("default", key_limits.claim_for(LIMIT, "app.Send", "k"), LIMIT)
    store.take(spot, JID, 60, NOW)
    store.renew({spot.holders_key(): [JID]}, 60)
    store.release({spot.holders_key(): [JID]})


def _batch(rc: redis.Redis) -> None:
    """A batch's life: opened, a member joined, closed, its events folded, a callback
    pushed and noted, its status read."""
    store = BatchStore(rc)
    store.open("b1", {"success": _raw(queue="cb").decode()}, NOW)
    store.join("b1", [JID])
    store.close("b1", "cb")
    rc.rpush(keys.batch_events("default"), f"b1 {JID} ack")
    for queue in ("cb", "default"):
        fold_queue(store, queue, lambda: NOW)
    store.status("b1")
    store.listed(10)


KEPT = Kept(queue="default", record='{"outcome":"success","value":1}', keep=60, index_ttl=60)


def _push_keeping_a_result(rc: redis.Redis) -> None:
    index = JidIndex(JID, "default", 600)
    EnqueueStore(rc).push_all({"default": [_raw().decode()]}, {}, indexed=[index])


def _settle_keeping_a_result(rc: redis.Redis) -> None:
    """The jid index's SET before the script, the result in the queue's slot by it (the
    script's other keys span slots until the queue-owned keys move: "settle a retry")."""
    _settle(rc, OutcomeRecord(kind="ack", jid=JID, class_name="app.Send", result=KEPT))


def _wait_for_a_result(rc: redis.Redis) -> None:
    rc.rpush(keys.result("default", JID), KEPT.record or "")
    results.wait(rc, JID, 0.01)
    rc.delete(keys.jid_index(JID))
    rc.sadd(keys.QUEUES, "default", "critical")
    results.wait(rc, JID, 0.01)  # no index: every queue's slot asked


def _job_records(rc: redis.Redis) -> None:
    """A job's status, attempts and runs read by jid: through its index, then without one
    (every registered queue's slot asked); and whether it finished, as a cancel asks."""
    rc.set(keys.jid_index(JID), JidIndex(JID, "default", 600, records_only=True).value)
    rc.hset(keys.status("default", JID), "status", "complete")
    rc.rpush(keys.job_attempts("default", JID), "{}")
    rc.rpush(keys.history("default", JID), "{}")
    rc.sadd(keys.QUEUES, "default", "critical")
    for _ in ("indexed", "probed"):
        tracking.status(rc, JID)
        tracking.attempts(rc, JID)
        tracking.history(rc, JID)
        CancelStore(rc).finished(JID)
        rc.delete(keys.jid_index(JID))


def _track_a_push(rc: redis.Redis) -> None:
    """A tracked job pushed (its jid index, then its push and its "queued" status), then
    marked working as it starts."""
    index = job_records.index(JID, "default", [600])
    assert index is not None
    EnqueueStore(rc).push_all(
        {"default": [_raw().decode()]}, {}, queued=[("default", JID)], indexed=[index]
    )
    RunStore(rc).set_status("default", JID, "working", NOW)


def _pause_and_resume(rc: redis.Redis) -> None:
    queue_pause.pause(rc, ["default", "critical"])
    queue_pause.paused(rc)
    queue_pause.resume(rc, ["default"])


OPERATIONS: dict[str, Callable[[redis.Redis], object]] = {
    "push": lambda rc: EnqueueStore(rc).push("default", [_raw().decode()]),
    "schedule": lambda rc: EnqueueStore(rc).push_all(
        {}, {"default": [(NOW, _raw().decode(), JID)]}
    ),
    "push_unique": _push_unique,
    "fetch from one queue": _fetch_one,
    "fetch from two queues": _fetch_two,
    "blocking fetch from one queue": _fetch_blocking,
    "pop from two queues": _pop_two,
    "blocking pop from one queue": lambda rc: FetchStore(rc).pop_blocking("default", 0.01),
    "requeue a stray": lambda rc: FetchStore(rc).requeue_one(IDENTITY, _held(rc)),
    "settle a tracked ack": lambda rc: _settle(
        rc, OutcomeRecord(kind="ack", jid=JID, class_name="app.Send", status="complete")
    ),
    "settle a retry": lambda rc: _settle(
        rc, OutcomeRecord(kind="retry", jid=JID, score=NOW, payload="{}", attempt="{}")
    ),
    "ack a batch": _ack_batch,
    "retry a batch": _retry_batch,
    "defer": lambda rc: RunStore(rc).defer(IDENTITY, _held(rc), NOW, jid=JID),
    "take and release a lock": _take_and_release,
    "hand over": lambda rc: HandoverStore(SettleStore(rc)).hand_over(
        IDENTITY, _held(rc), OutcomeRecord(kind="ack", jid=JID)
    ),
    "requeue at shutdown": _requeue_own,
    "recover a gone process": _recover,
    "judge a process gone": _judge_gone,
    "file a hand-over": _file_handed_over,
    "bury": _bury_parked,
    "move a due job": _move_due,
    "look for due jobs": lambda rc: DueStore(rc).due_sets(NOW),
    "file an unreadable scheduled entry in dead": _bury_unreadable,
    "cancel a scheduled job": _cancel_scheduled,
    "kill and delete from the sets": _kill_and_delete,
    "page the sets merged over queues": _page_sets,
    "beat": _beat,
    "pulse": _pulse,
    "remove a process": lambda rc: ProcessRegistry(rc).remove(IDENTITY),
    "cancel a waiting job": _cancel,
    "claim a periodic tick": _claim_tick,
    "load the periodic schedule": lambda rc: PeriodicStore(rc).change({}, {"n": "{}"}, ()),
    "restore the periodic schedule": lambda rc: PeriodicStore(rc).restore("token", {}),
    "count totals": tracking.totals,
    "count days": lambda rc: tracking.daily_counts(rc, "processed", NOW, 7),
    "read a class's runs": _class_runs,
    "clear a queue": _clear_queue,
    "pause and resume a queue": _pause_and_resume,
    "run a batch": _batch,
    "fire a batch callback": lambda rc: BatchStore(rc).fire("cb", "b1-success", _raw().decode()),
    "list the paused queues": queue_pause.paused,
    "take, renew and let go of a limit place": _limit_place,
    "read the limits' use": lambda rc: LimitStore(rc).uses(),
    "read the dashboard's counts": lambda rc: DashboardStore.on(rc, Retention()).counts(),
    "push a job keeping its result": _push_keeping_a_result,
    "settle keeping a result": _settle_keeping_a_result,
    "wait for a result": _wait_for_a_result,
    "read a job's records by jid": _job_records,
    "push a tracked job and mark it working": _track_a_push,
}


def _spans_slots(operation: Callable[[redis.Redis], object], rc: redis.Redis) -> bool:
    try:
        operation(rc)
    except ClusterCrossSlotError:  # redis-py's name for Redis's CROSSSLOT answer
        return True
    return False


def test_the_list_names_only_operations_this_census_runs() -> None:
    """Every operation listed as spanning slots is one the census runs (no stale names)."""
    assert not SPANS_SLOTS_TODAY - set(OPERATIONS)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_an_operation_keeps_to_one_slot_unless_listed(name: str, slot_checked: redis.Redis) -> None:
    """Run on a node that refuses CROSSSLOT, it spans slots exactly when it is listed."""
    spans = _spans_slots(OPERATIONS[name], slot_checked)
    if name in SPANS_SLOTS_TODAY:
        assert spans, f"{name!r} keeps to one slot now: take it off SPANS_SLOTS_TODAY"
    else:
        assert not spans, f"{name!r} touches keys of several slots (CROSSSLOT)"
