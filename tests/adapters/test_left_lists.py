"""Jobs left for a reconciler are on their own queue's lists (layout step 9): hand-overs
at a stop, repeat orphans and hand-backs parked; a reconciler files each from its queue's
list, in that queue's slot, reading the lists of every part and of the empty queue name's."""

from __future__ import annotations

import json

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.handover import HandoverStore
from cogworker.adapters.jobs.left_lists import left_lists
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.layout_store import LayoutStore
from cogworker.app.worker.reconciler import Reconciler
from cogworker.domain import layout, layout_verdicts, payload
from tests.support.reconcilers import reconciler
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:stopping"
QUEUES = ("mail", "reports")
MAX_ORPHANINGS = 3


def _raw(jid: str, queue: str) -> bytes:
    return json.dumps({"class": "app.Job", "args": [], "jid": jid, "queue": queue}).encode()


def _reconciler(rc: redis.Redis) -> Reconciler:
    return reconciler(rc, cogworker.Config(max_orphanings=MAX_ORPHANINGS))


def test_hand_overs_go_on_their_queue_s_list_and_are_filed_from_there(rc: redis.Redis) -> None:
    """A stopping process hands over an ack of each queue's job: each record on its queue's
    unsettled list, the queue a part; a reconciler files both (each queue counts its ack)
    and a damaged record is filed in its list's queue's dead set."""
    handovers = HandoverStore(SettleStore(rc))
    for queue in QUEUES:
        rc.lpush(keys.in_progress(queue, IDENTITY), _raw(f"{queue}-1", queue))
        fetched = Fetched(queue=queue, raw=_raw(f"{queue}-1", queue))
        assert handovers.hand_over(IDENTITY, fetched, OutcomeRecord(kind="ack", jid=f"{queue}-1"))
    assert not any(rc.llen(keys.in_progress(queue, IDENTITY)) for queue in QUEUES)
    for queue in QUEUES:
        (record,) = rc.lrange(keys.unsettled(queue), 0, -1)
        assert json.loads(record)["queue"] == queue
    assert set(rc.smembers(keys.PARTS)) == {queue.encode() for queue in QUEUES}
    rc.rpush(keys.unsettled("mail"), b"{damaged")

    reconciler = _reconciler(rc)
    assert reconciler.left.file_unsettled() == 2

    for queue in QUEUES:
        assert rc.get(keys.stat(queue, "processed")) == b"1"
        assert not rc.exists(keys.unsettled(queue))
    (buried,) = rc.zrange(keys.dead("mail"), 0, -1)
    assert json.loads(buried)["raw"] == "{damaged"
    assert reconciler.left.file_unsettled() == 0


def test_repeat_orphans_are_parked_on_their_queue_s_list_and_buried_in_its_dead_set(
    rc: redis.Redis,
) -> None:
    """A gone process's lists of two queues holding jobs orphaned too often, and the empty
    queue name's (a migrated entry naming no queue) one that isn't a job: each parked on
    its list's queue's list; a reconciler buries each in the dead set of that queue; the
    process's set of queues is empty after."""
    for queue in QUEUES:
        rc.lpush(keys.in_progress(queue, IDENTITY), _raw(f"{queue}-1", queue))
        rc.set(keys.orphanings(queue, f"{queue}-1"), MAX_ORPHANINGS)
    rc.lpush(keys.in_progress("", IDENTITY), b"\xff not a job")
    rc.sadd(keys.process_queues(IDENTITY), *QUEUES, "")

    recovered = RecoverStore(rc).recover_all(IDENTITY, max_orphanings=MAX_ORPHANINGS, forget=True)

    assert recovered == (0, 3)
    assert not rc.exists(keys.process_queues(IDENTITY))

    for queue in QUEUES:
        assert rc.lrange(keys.repeat_orphans(queue), 0, -1) == [_raw(f"{queue}-1", queue)]
    assert rc.lrange(keys.repeat_orphans(""), 0, -1) == [b"\xff not a job"]
    assert set(rc.smembers(keys.PARTS)) == {queue.encode() for queue in QUEUES}

    assert _reconciler(rc).left.bury_repeat_orphans() == 3

    for queue in QUEUES:
        (dead,) = rc.zrange(keys.dead(queue), 0, -1)
        job = payload.decode(dead).unwrap()
        assert (job.jid, job.error_class) == (f"{queue}-1", "cogworker.exceptions.JobOrphanedError")
        assert not rc.exists(keys.repeat_orphans(queue), keys.orphanings(queue, f"{queue}-1"))
    assert rc.zcard(keys.dead("")) == 1
    assert left_lists(rc, keys.LEFT_LIST_NAMES) == []


def test_a_repeat_hand_back_is_parked_on_its_queue_s_list(rc: redis.Redis) -> None:
    """At a stop, a job still running past its hand-back budget is parked on its own
    queue's repeat-hand-backs list; another queue's job, within its budget, goes back."""
    mail, reports = _raw("mail-1", "mail"), _raw("reports-1", "reports")
    rc.lpush(keys.in_progress("mail", IDENTITY), mail)
    rc.lpush(keys.in_progress("reports", IDENTITY), reports)
    rc.set(keys.handbacks("mail", "mail-1"), 2)

    requeued = RecoverStore(rc).requeue_own(
        IDENTITY, ["mail", "reports"], running=[mail, reports], max_handbacks=2
    )

    assert requeued == 1
    assert rc.lrange(keys.repeat_handbacks("mail"), 0, -1) == [mail]
    assert rc.lrange(keys.queue("reports"), 0, -1) == [reports]
    (parked,) = left_lists(rc, keys.LEFT_LIST_NAMES)
    assert (parked.name, parked.queue, parked.entries) == ("repeat_handbacks", "mail", (mail,))


def test_an_old_global_list_is_a_key_of_the_old_layout(rc: redis.Redis) -> None:
    """A Redis with no layout number holding an entry on any of the global lists is refused
    (`cogworker migrate` moves it), and nothing is written."""
    for name in keys.LEFT_LIST_NAMES:
        rc.flushdb()
        rc.rpush(f"cogworker:{name}", _raw("j1", "mail"))

        verdict = LayoutStore(rc).admit()

        assert verdict == layout_verdicts.Outdated(stored=0, current=layout.current())
        assert not rc.exists(keys.LAYOUT)
