"""Jobs on one queue start in the order they were enqueued (FIFO): those already waiting
when a worker looks, and those pushed while it waits on the empty queue."""

from __future__ import annotations

import redis

import cogworker
from tests.app.helpers import Workers, runs, start_times, wait_for_processes
from tests.app.jobs import Record
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies


def run_in_order(rc: redis.Redis, jids: list[str], worker: CogworkerProcess) -> list[str]:
    """Wait until each job ran once; the jids in the order they started."""
    wait_until(
        lambda: all(runs(rc, jid) == 1 for jid in jids),
        15.0,
        message=lambda: f"not every job ran; log:\n{worker.log_tail()}",
    )
    return sorted(jids, key=lambda jid: start_times(rc, jid)[0])


def test_jobs_start_in_enqueue_order(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """One thread: five jobs queued before the worker starts, then five pushed in one call
    while it waits on the empty queue (a blocking fetch), each run in enqueue order."""
    waiting = [jid for jid in client.enqueue_many(Record, [[n] for n in range(5)]) if jid]
    worker = workers.start(concurrency=1)
    wait_for_processes(rc, 1, worker)
    assert run_in_order(rc, waiting, worker) == waiting

    wait_until(
        lambda: any("b" in entry["flags"] for entry in rc.client_list()),
        10.0,
        message=lambda: f"the worker never waited on the queue; log:\n{worker.log_tail()}",
    )
    pushed = [jid for jid in client.enqueue_many(Record, [[n] for n in range(5, 10)]) if jid]
    assert run_in_order(rc, pushed, worker) == pushed
