"""Results on real workers: `result()` returns a job's value or raises how it ended (dead,
discarded, cancelled, expired, a value a result can't hold), times out, or finds nothing;
and a kill -9 mid-batch leaves a result exactly for every job whose ack was written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.cancelling import CancelResult
from tests.faults import jobs_results, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.faults.jobs_results import MAX_RESULT_BYTES
from tests.support.clients import EitherClient
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

APP = "tests.faults.jobs_results:results_config"


def ended(client: EitherClient, jid: str | None) -> cogworker.JobResultError:
    """The error `result()` raises for `jid`, which ended without a value."""
    with pytest.raises(cogworker.JobResultError) as raised:
        client.result(str(jid), timeout=20)
    return raised.value


@on_both_topologies
def test_result_of_every_end(
    start_worker: StartWorker, either_client: EitherClient, inspect: redis.Redis, oracle_file: Path
) -> None:
    """Through either client: the value of a sync or async job (waited for while the worker
    starts), how each other end came about, a timeout, and nothing for an unknown jid or a
    class that keeps nothing; results expire after keep_result."""
    client = either_client
    with pytest.raises(cogworker.ResultNotFoundError, match="not found or expired"):
        client.result("no-such-job", timeout=0)
    later = str(client.enqueue_in(60, jobs_results.Returns, 1))
    with pytest.raises(cogworker.ResultTimeoutError, match="within the timeout"):
        client.result(later, timeout=0.2)
    assert client.cancel(later) is CancelResult.REMOVED
    assert ended(client, later).outcome == "cancelled"
    expired = client.enqueue(jobs_results.Returns, 2, expires_at=time.time() - 1)
    first = str(client.enqueue(jobs_results.Returns, {"a": [1, 2.5, None]}, 0.2))
    worker = start_worker(APP)
    assert client.result(first, timeout=20) == {"a": [1, 2.5, None]}
    assert client.result(first) == {"a": [1, 2.5, None]}  # read again: still there
    assert client.result(str(client.enqueue(jobs_results.AsyncReturns, "loop"))) == "loop"
    assert ended(client, expired).outcome == "expired"
    dead = ended(client, client.enqueue(jobs_results.Dies))
    assert (dead.outcome, dead.error_class, dead.error_message) == ("dead", "ValueError", "no luck")
    discarded = ended(client, client.enqueue(jobs_results.Discards))
    assert (discarded.outcome, discarded.error_class) == ("discarded", "KeyError")
    a_set = ended(client, client.enqueue(jobs_results.ReturnsASet))
    assert a_set.error_class == "cogworker.exceptions.UnstorableResultError"
    assert "the return value is set" in a_set.error_message
    too_much = ended(client, client.enqueue(jobs_results.ReturnsTooMuch))
    assert f"{MAX_RESULT_BYTES + 2} bytes of JSON, more than the {MAX_RESULT_BYTES}" in (
        too_much.error_message
    )
    running = str(client.enqueue(jobs_results.LoopsKeepingResult, str(oracle_file) + ".gate"))
    wait_until(lambda: starts_of(oracle_file, running) == 1, 20, message=worker.log_tail)
    assert client.cancel(running) is CancelResult.SIGNALLED
    assert ended(client, running).outcome == "cancelled"
    with pytest.raises(cogworker.ResultNotFoundError):
        client.result(str(client.enqueue(jobs_results.KeepsNothing)), timeout=0)
    stop_all(worker)
    for jid in (first, later, running):
        assert 0 < inspect.ttl(keys.result("default", jid)) <= 60
        assert 0 < inspect.ttl(keys.jid_index(jid)) <= 60
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_a_result_is_there_exactly_when_the_ack_is(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis
) -> None:
    """A worker acking in batches, killed -9 mid-drain: every job taken off its queue and
    its in-progress list has its result, every job still on one has none."""
    worker = start_worker(APP, concurrency=16)
    registered(inspect, 1)
    # 800 runs of 20 ms on 16 threads: a second's work, killed after its first hundred.
    args = [[n, 0.02] for n in range(800)]
    jids = [str(jid) for jid in client.enqueue_many(jobs_results.Returns, args)]
    wait_until(lambda: int(inspect.get(keys.stat("default", "processed")) or 0) >= 100, 30)
    worker.kill()
    worker.wait_for_exit(10)
    held = [entry for key in inspect.scan_iter(match=keys.in_progress("*", "*"))
            for entry in inspect.lrange(key, 0, -1)]  # fmt: skip
    waiting = {
        json.loads(entry)["jid"] for entry in [*inspect.lrange(keys.queue("default"), 0, -1), *held]
    }
    kept = {jid for jid in jids if inspect.exists(keys.result("default", jid))}
    assert kept == set(jids) - waiting
    assert len(kept) == int(inspect.get(keys.stat("default", "processed")) or 0)
    assert all(client.result(jid, timeout=0) == n for n, jid in enumerate(jids) if jid in kept)
    assert held  # the kill came mid-drain: jobs held unacked
