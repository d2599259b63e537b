"""Strays: jobs a fetch moved onto this process's in-progress lists whose reply never came
(Redis failed after the move).  The fetcher's next fetch puts back every job on its lists
of each queue it serves that it doesn't hold, each on the queue whose list held it."""

from __future__ import annotations

import json
import logging

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched, FetchStore
from cogworker.app.worker.fetcher import Fetcher
from cogworker.app.worker.slots import FetchSlots
from cogworker.app.worker.state import WorkerState
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:strays"
CONFIG = cogworker.Config(queues=("high", "low"))


def _job(jid: str, queue: str) -> bytes:
    return json.dumps({"class": "a.B", "args": [], "jid": jid, "queue": queue}).encode()


def test_strays_of_two_queues_go_back_to_their_own_queues_and_held_jobs_stay(
    rc: redis.Redis,
) -> None:
    """A held job stays on its list; a stray on each queue's list goes back to the front of
    that queue (oldest first); the fetch after them takes the strays again, in order."""
    state = WorkerState(identity=IDENTITY)
    held, stray_high, stray_low = _job("h1", "high"), _job("h2", "high"), _job("l1", "low")
    rc.lpush(keys.queue("high"), _job("h3", "high"))
    rc.lpush(keys.in_progress("high", IDENTITY), held, stray_high)
    rc.lpush(keys.in_progress("low", IDENTITY), stray_low)
    state.hold(held)
    fetcher = Fetcher(
        FetchStore(rc), CONFIG, state, logging.getLogger("cogworker.test.strays"),
        deliver=lambda jobs: None, slots=FetchSlots(2), plan=CONFIG.queue_plan,
    )  # fmt: skip

    fetcher._requeue_strays()

    assert rc.lrange(keys.in_progress("high", IDENTITY), 0, -1) == [held]
    assert not rc.exists(keys.in_progress("low", IDENTITY))
    assert rc.lrange(keys.queue("high"), 0, -1) == [_job("h3", "high"), stray_high]
    assert rc.lrange(keys.queue("low"), 0, -1) == [stray_low]
    turn = FetchStore(rc).fetch(IDENTITY, ("high", "low"), 3)
    assert turn.jobs == [
        Fetched(queue="high", raw=stray_high),
        Fetched(queue="high", raw=_job("h3", "high")),
        Fetched(queue="low", raw=stray_low),
    ]
