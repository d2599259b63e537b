"""perform_in / perform_at: each job runs at (not before) its time, exactly once."""

from __future__ import annotations

import datetime as dt
import time

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import (
    Workers,
    logs,
    runs,
    start_times,
    wait_for_beats_over,
    wait_for_processes,
    zset_entries,
)
from tests.app.jobs import Record
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

#: A start may be seen this much before its time: the clocks of two processes, read apart.
CLOCK_SLACK = 0.05


def test_scheduled_jobs_run_at_their_time_exactly_once_with_three_pollers(
    rc: redis.Redis, client: cogworker.Client, configured: cogworker.Client, workers: Workers
) -> None:
    """Jobs from enqueue_in, enqueue_at (timestamp and datetime), perform_in and perform_at each
    run once, not before their time, with 3 processes polling every 0.2 s."""
    started = [workers.start(concurrency=3) for _ in range(3)]
    identities = wait_for_processes(rc, 3, *started)

    now = time.time()
    jids = [
        client.enqueue_in(1.0, Record, "enqueue_in"),
        client.enqueue_at(now + 1.5, Record, "enqueue_at timestamp"),
        client.enqueue_at(dt.datetime.fromtimestamp(now + 1.2, dt.UTC), Record, "datetime"),
        Record.perform_in(0.8, "perform_in"),
        Record.perform_at(now + 1.3, "perform_at"),
        *(client.enqueue_at(now + 1.0, Record, "same time", n) for n in range(20)),
    ]
    past = client.enqueue_at(now - 10.0, Record, "in the past")  # enqueued at once
    assert None not in jids
    scheduled_at = {
        entry["jid"]: score for entry, score in zset_entries(rc, "cogworker:{q:default}:schedule")
    }
    assert past not in scheduled_at
    wait_until(lambda: runs(rc, past), 10.0, message="a past perform_at did not run at once")
    assert set(scheduled_at) == set(jids)
    assert scheduled_at[jids[1]] == pytest.approx(now + 1.5)
    assert scheduled_at[jids[4]] == pytest.approx(now + 1.3)

    wait_until(
        lambda: rc.scard("done") == len(jids) + 1,
        20.0,
        message=lambda: f"{rc.scard('done')} of {len(jids) + 1} ran; logs:\n{logs(*started)}",
    )
    # Half a second more (a few poll rounds of every process): still nothing ran twice.
    wait_for_beats_over(rc, identities[0], 0.5, started[0])
    assert rc.zcard("cogworker:{q:default}:schedule") == 0

    for jid in jids:
        assert jid is not None
        assert runs(rc, jid) == 1, jid
        [start] = start_times(rc, jid)
        assert start >= scheduled_at[jid] - CLOCK_SLACK, (jid, start, scheduled_at[jid])
    assert int(rc.get("done:total") or 0) == len(jids) + 1  # and the past one
    assert rc.llen(keys.queue("default")) == 0
