"""Results, per-key limits and batches together, on real workers: a batch member under a
concurrency limit keeps its result and tells its batch exactly when it ends (run, died,
cancelled waiting, expired, buried as a repeat orphan), and not when its limit puts it
back for later."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.cancelling import CancelResult
from cogworker.domain import batches
from tests.faults.conftest import StartWorker, starts_of, stop_all
from tests.faults.jobs_together import EXPIRES_IN, QUEUE, Counts, ExpiresSoon, Kept, Limited
from tests.support.processes import wait_until

APP = "tests.faults.jobs:config"


def _ended(client: cogworker.Client, jid: str | None) -> cogworker.JobResultError:
    with pytest.raises(cogworker.JobResultError) as raised:
        client.result(str(jid), timeout=20)
    return raised.value


def _completed(client: cogworker.Client, inspect: redis.Redis, bid: str) -> bool:
    status = client.batch_status(bid)
    return status is not None and status.complete and inspect.get(f"fired:{bid}") == b"1"


def _settled(client: cogworker.Client, bid: str) -> int:
    status = client.batch_status(bid)
    return 0 if status is None else status.settled


def _deferred(inspect: redis.Redis, jid: str) -> bool:
    """Whether `jid` waits in the scheduled set, put back by its limit."""
    waiting = [json.loads(entry) for entry in inspect.zrange(keys.schedule(QUEUE), 0, -1)]
    return any(job["jid"] == jid and job["limit"].get("waits", 0) >= 1 for job in waiting)


def test_a_limited_member_keeps_its_result_and_tells_its_batch_once_it_ends(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Under Concurrency(max=1): the second member of a busy key is put back, with no result
    and no event yet; then each member's result (a value, or its death) and the batch's
    callback once, every limit place let go."""
    gate = oracle_file.with_suffix(".gate")
    worker = start_worker(APP, queues=[QUEUE])
    with client.batch(on_complete=Counts) as batch:
        first = str(batch.enqueue(Limited, "k", "first", str(gate)))
        wait_until(lambda: starts_of(oracle_file, first) == 1, 20, message=worker.log_tail)
        second = batch.enqueue(Limited, "k", "second")  # k's place is first's
        dies = batch.enqueue(Limited, "j", "die")
    alone = str(client.enqueue(Limited, "j", "alone"))  # no batch: a limited job keeping its result
    wait_until(lambda: _deferred(inspect, str(second)), 20, message=worker.log_tail)
    callback = batches.callback_jid(batch.bid, "complete")
    for pending in (str(second), callback):  # not ended yet: waited for, not "not found"
        with pytest.raises(cogworker.ResultTimeoutError):
            client.result(pending, timeout=0)
    assert starts_of(oracle_file, str(second)) == 0
    events = inspect.lrange(keys.batch_events(QUEUE), 0, -1)
    assert not inspect.sismember(keys.batch_settled(batch.bid), str(second))
    assert not [event for event in events if str(second).encode() in event]
    assert client.result(alone, timeout=20) == "alone"
    assert _ended(client, dies).outcome == "dead"
    wait_until(lambda: _settled(client, batch.bid) == 1, 20, message=worker.log_tail)
    gate.touch()
    assert client.result(first, timeout=20) == "first"
    assert client.result(str(second), timeout=20) == "second"
    assert client.result(callback, timeout=20) == 1
    wait_until(lambda: _completed(client, inspect, batch.bid), 20, message=worker.log_tail)
    status = client.batch_status(batch.bid)
    assert status is not None
    assert dict(status.finals) == {"ack": 2, "dead": 1}
    stop_all(worker)
    assert inspect.get(f"fired:{batch.bid}") == b"1"
    for key in ("k", "j"):
        assert inspect.zcard(keys.limit(QUEUE, "concurrency", Limited.class_path(), key)) == 0
    assert inspect.llen(keys.batch_events(QUEUE)) == 0


def test_members_ended_outside_a_run_keep_their_results_and_tell_their_batch(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis
) -> None:
    """Members keeping their results, cancelled while waiting, expired unrun, and buried as
    repeat orphans: each result says how it ended, and the batch counts each end once."""
    enqueued = time.time()
    with client.batch(on_complete=Counts) as batch:
        cancelled = str(batch.enqueue(Kept, "cancelled"))
        expired = str(batch.enqueue(ExpiresSoon, "expired"))
        orphan = str(batch.enqueue(Kept, "orphan"))
        ran = str(batch.enqueue(Kept, "ran"))
    assert client.cancel(cancelled) is CancelResult.REMOVED
    # The orphan parked as the recovery parks a job whose process kept dying under it.
    entries = inspect.lrange(keys.queue(QUEUE), 0, -1)
    (parked,) = [entry for entry in entries if json.loads(entry)["jid"] == orphan]
    inspect.lrem(keys.queue(QUEUE), 1, parked)
    inspect.rpush(keys.repeat_orphans(QUEUE), parked)
    wait_until(lambda: time.time() > enqueued + EXPIRES_IN, 5)
    worker = start_worker(APP, queues=[QUEUE])
    assert _ended(client, cancelled).outcome == "cancelled"
    assert _ended(client, expired).outcome == "expired"
    buried = _ended(client, orphan)
    assert (buried.outcome, buried.error_class) == ("dead", "cogworker.exceptions.JobOrphanedError")
    assert client.result(ran, timeout=20) == "ran"
    wait_until(lambda: _completed(client, inspect, batch.bid), 20, message=worker.log_tail)
    status = client.batch_status(batch.bid)
    assert status is not None
    assert dict(status.finals) == {"ack": 1, "cancel": 1, "expire": 1, "dead": 1}
    stop_all(worker)
    assert inspect.llen(keys.batch_events(QUEUE)) == 0
