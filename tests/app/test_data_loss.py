"""Redis losing its data under a worker with a job in flight: the loss is said as such."""

from __future__ import annotations

import redis

import cogworker
from tests.app.helpers import Workers
from tests.app.jobs import Gate
from tests.support.processes import wait_until

LOSS_WARNING = "WARNING Redis lost its data"
FOUND_GONE = "no longer on this process's in-progress list"


def test_a_run_settled_after_flushall_is_said_lost_with_the_data(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """FLUSHALL while a job runs: when it ends, the worker warns once that Redis lost its data
    (it used to say only that another process had recovered the job)."""
    worker = workers.start(concurrency=1)
    jid = client.enqueue(Gate, "flush")
    wait_until(lambda: rc.sismember("started", jid), 20, message=worker.log_tail)
    rc.flushall()
    rc.set("gate:flush", 1)
    wait_until(lambda: FOUND_GONE in worker.log_text(), 30, message=worker.log_tail)
    wait_until(lambda: LOSS_WARNING in worker.log_text(), 30, message=worker.log_tail)
    assert worker.log_text().count(LOSS_WARNING) == 1, worker.log_tail()
    assert worker.is_running
