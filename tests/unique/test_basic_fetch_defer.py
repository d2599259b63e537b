"""A while_executing duplicate fetched by basic fetch (no in-progress list) is put back for
later, not dropped: the deferral files it without looking for it on a list."""

from __future__ import annotations

import json
import logging
import time

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.run import RunStore
from cogworker.app.job_record import build_job
from cogworker.app.worker.run_start import RunStart
from cogworker.app.worker.state import WorkerState
from cogworker.domain import locks, payload
from tests.support.topology_marks import on_both_topologies
from tests.unique.jobs import Exclusive

pytestmark = on_both_topologies


def test_a_basic_fetch_duplicate_goes_to_the_schedule(rc: redis.Redis) -> None:
    """Its lock is another jid's: may_start says no and the job waits in Scheduled."""
    config = cogworker.Config(fetch="basic")
    starts = RunStart(
        RunStore(rc), config, WorkerState(identity="host:1:basic"), logging.getLogger("t")
    )
    job = build_job(Exclusive, [1], time.time())
    rc.set(locks.held_locks(job).unique_lock, "another-jid")
    raw = payload.encode(job).encode()
    assert starts.may_start(job, Fetched(queue=job.queue, raw=raw)) is False
    [filed] = rc.zrange(keys.schedule("default"), 0, -1)
    assert json.loads(filed)["jid"] == job.jid
