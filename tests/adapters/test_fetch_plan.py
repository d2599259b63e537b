"""The fetch plan over several queues (docs/redis-cluster.md, "Fetch: several queues"), on a
real Redis: the first queue asked for the whole batch, the others for at most what their
length showed, in order; never more than the batch; each queue's jobs oldest first, onto
this process's list of that queue."""

from __future__ import annotations

import json

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogworker.adapters import queue_pause
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import FetchStore
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:plan"
QUEUES = ("high", "mid", "low")


def _push(rc: redis.Redis, queue: str, count: int) -> list[bytes]:
    """`count` jobs pushed onto `queue` (as a client does: on the left), oldest first."""
    jobs = [json.dumps({"jid": f"{queue}-{n}", "queue": queue}).encode() for n in range(count)]
    if jobs:
        rc.lpush(keys.queue(queue), *jobs)
    return jobs


def test_a_short_first_queue_is_topped_up_from_the_next_in_order(rc: redis.Redis) -> None:
    """3 on high, 4 on mid, 5 on low, a batch of 6: high's 3, then mid's oldest 3; low
    untouched; each on this process's list of its queue."""
    pushed = {queue: _push(rc, queue, n) for queue, n in zip(QUEUES, (3, 4, 5), strict=True)}

    turn = FetchStore(rc).fetch(IDENTITY, QUEUES, 6)

    assert [job.raw for job in turn.jobs] == [*pushed["high"], *pushed["mid"][:3]]
    assert [job.queue for job in turn.jobs] == ["high"] * 3 + ["mid"] * 3
    assert rc.llen(keys.in_progress("high", IDENTITY)) == 3
    assert rc.llen(keys.in_progress("mid", IDENTITY)) == 3
    assert not rc.exists(keys.in_progress("low", IDENTITY))
    assert rc.llen(keys.queue("low")) == 5


def test_a_paused_queue_is_skipped_and_named(rc: redis.Redis) -> None:
    """mid paused: high's 1, then low's; the turn names mid, whose jobs stay."""
    pushed = {queue: _push(rc, queue, 2) for queue in QUEUES}
    queue_pause.pause(rc, ["mid"])

    turn = FetchStore(rc).fetch(IDENTITY, QUEUES, 3)

    assert [job.raw for job in turn.jobs] == [*pushed["high"], pushed["low"][0]]
    assert turn.paused == {"mid"}
    assert rc.llen(keys.queue("mid")) == 2


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=6), min_size=3, max_size=3),
    batch=st.integers(min_value=1, max_value=8),
    basic=st.booleans(),
)
def test_batches_keep_priority_and_each_queue_s_order_never_over_the_batch(
    rc: redis.Redis, lengths: list[int], batch: int, basic: bool
) -> None:
    """Fetching until every queue is empty: no batch over its size, every job once, a
    batch short only when the queues held fewer, and the jobs in strict priority then
    each queue's age (reliable and basic fetch)."""
    rc.flushdb()
    pushed = [job for queue, n in zip(QUEUES, lengths, strict=True) for job in _push(rc, queue, n)]
    store, taken = FetchStore(rc), []
    while True:
        turn = store.pop(QUEUES, batch) if basic else store.fetch(IDENTITY, QUEUES, batch)
        assert len(turn.jobs) <= batch
        if not turn.jobs:
            break
        taken += [job.raw for job in turn.jobs]
        assert len(turn.jobs) == batch or len(taken) == len(pushed)
    assert taken == pushed
    held = sum(rc.llen(keys.in_progress(queue, IDENTITY)) for queue in QUEUES)
    assert held == (0 if basic else len(pushed))
