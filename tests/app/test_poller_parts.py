"""The poller over every queue's scheduled and retry sets (layout step 8): one round trip
finds the sets holding a due entry, each due entry goes onto its own queue once, one that
isn't a job goes to its queue's dead set, and nothing not yet due moves."""

from __future__ import annotations

import json
import logging
import threading

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.due import DueStore
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.app.worker.poller import Poller
from tests.support.sets import add_to_set
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

NOW = 1_800_000_000.0


def _job(jid: str, queue: str) -> bytes:
    return json.dumps({"class": "app.Send", "args": [], "jid": jid, "queue": queue,
                       "retry": True}).encode()  # fmt: skip


def _poller(rc: redis.Redis) -> Poller:
    return Poller(
        dues=DueStore(rc), recovers=RecoverStore(rc), interval=1.0,
        stopping=threading.Event(), logger=logging.getLogger("test"), clock=lambda: NOW,
    )  # fmt: skip


def test_a_pass_moves_the_due_entries_of_every_queue_onto_their_own_queues(
    rc: redis.Redis,
) -> None:
    """Due entries in two queues' scheduled sets and a third's retry set (one of them tied
    with another queue's), one not yet due, and an entry that isn't a job: each due job is on
    its queue, the later one waits, the broken one is in its queue's dead set."""
    add_to_set(rc, keys.schedule("mail"), {_job("m1", "mail"): NOW - 5, _job("m2", "mail"): NOW})
    add_to_set(rc, keys.schedule("sms"), {_job("s1", "sms"): NOW - 5, b"not a job": NOW - 1})
    add_to_set(rc, keys.retry("billing"), {_job("b1", "billing"): NOW - 60})
    add_to_set(rc, keys.retry("billing"), {_job("b2", "billing"): NOW + 60})

    assert sorted(DueStore(rc).due_sets(NOW)) == [
        (keys.retry("billing"), "billing"),
        (keys.schedule("mail"), "mail"),
        (keys.schedule("sms"), "sms"),
    ]
    assert _poller(rc).poll() == 4

    def queued(queue: str) -> list[str]:
        return sorted(json.loads(e)["jid"] for e in rc.lrange(keys.queue(queue), 0, -1))

    assert (queued("mail"), queued("sms"), queued("billing")) == (["m1", "m2"], ["s1"], ["b1"])
    assert [json.loads(e)["jid"] for e in rc.zrange(keys.retry("billing"), 0, -1)] == ["b2"]
    [buried] = rc.zrange(keys.dead("sms"), 0, -1)
    assert json.loads(buried)["class"] == "unparseable_job"
    assert rc.zcard(keys.schedule("sms")) == rc.zcard(keys.schedule("mail")) == 0
    assert DueStore(rc).due_sets(NOW) == []
    assert _poller(rc).poll() == 0
