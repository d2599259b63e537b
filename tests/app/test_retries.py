"""Failing jobs: the retry entry, the default backoff, re-runs, dead, and each `retry=` option."""

from __future__ import annotations

import time

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.domain.retries import max_retries
from tests.app.helpers import Workers, identities, runs, wait_for_beats_over, zset_entries
from tests.app.jobs import AlwaysFails, FailsTwiceRetried, NoRetryFalse, NoRetryZero
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

ERROR_CLASS = "tests.app.jobs.JobBoomError"


def test_first_failure_files_a_retry_entry_with_the_default_backoff(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """A failed job with `retry` unset is in retry with its error fields, a 25-retry budget and a
    score inside the default backoff's bounds."""
    before = time.time()
    jid = client.enqueue(AlwaysFails, "first")
    assert jid is not None
    worker = workers.start()

    entries = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:retry"),
        20.0,
        message=lambda: f"no retry entry; log:\n{worker.log_tail()}",
    )

    assert len(entries) == 1
    entry, score = entries[0]
    assert entry["jid"] == jid
    assert entry["class"] == AlwaysFails.class_path()
    assert entry["args"] == ["first"]
    assert entry["queue"] == "default"
    assert entry["retry_count"] == 1
    assert entry["error_class"] == ERROR_CLASS
    assert entry["error_message"] == "boom ('first',)"
    assert before <= entry["failed_at"] <= time.time()
    count = entry["retry_count"]
    assert entry["failed_at"] + count**4 + 15 <= score
    assert score < entry["failed_at"] + count**4 + 15 + 30 * (count + 1)
    # retry unset is True: a budget of 25 retries.
    assert entry["retry"] is True
    assert max_retries(entry["retry"]) == 25
    assert runs(rc, jid) == 1
    assert rc.zcard("cogworker:{q:default}:dead") == 0
    assert rc.llen(keys.queue("default")) == 0


def test_job_with_retry_two_runs_three_times_after_its_delays_then_is_dead(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """With `retry=2` and a 1 s `retry_in`, a failing job runs 3 times, each after the delay,
    then lands in dead."""
    jid = client.enqueue(FailsTwiceRetried, 7)
    assert jid is not None
    worker = workers.start()

    entries = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:retry"),
        20.0,
        message=lambda: f"no retry entry; log:\n{worker.log_tail()}",
    )
    entry, score = entries[0]
    latest_failure = entry.get("retried_at") or entry["failed_at"]
    assert abs(score - (latest_failure + 1.0)) < 1e-3  # the hook's delay, used as given

    dead = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:dead"),
        20.0,
        message=lambda: f"never dead; log:\n{worker.log_tail()}",
    )

    assert [entry["jid"] for entry, _ in dead] == [jid]
    entry = dead[0][0]
    assert entry["error_class"] == ERROR_CLASS
    assert entry["error_message"] == "boom (7,)"
    assert rc.zcard("cogworker:{q:default}:retry") == 0
    assert runs(rc, jid) == 3
    starts = [float(value) for value in rc.lrange(f"starts:{jid}", 0, -1)]
    fails = [float(value) for value in rc.lrange(f"fails:{jid}", 0, -1)]
    for failed, next_start in zip(fails, starts[1:], strict=False):
        assert next_start >= failed + 1.0 - 0.05
    assert rc.llen(keys.queue("default")) == 0


def test_retry_false_and_retry_zero_go_to_dead_at_once(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """Jobs with `retry=False` and `retry=0` go to dead after one run, never to retry."""
    jids = {client.enqueue(NoRetryFalse, "false"), client.enqueue(NoRetryZero, "zero")}
    worker = workers.start()

    dead = wait_until(
        lambda: (
            (found := zset_entries(rc, "cogworker:{q:default}:dead")) and len(found) == 2 and found
        ),
        20.0,
        message=lambda: f"not both dead; log:\n{worker.log_tail()}",
    )

    assert {entry["jid"] for entry, _ in dead} == jids
    for entry, _ in dead:
        assert entry["retry_count"] == 1
        assert entry["error_class"] == ERROR_CLASS
    assert rc.zcard("cogworker:{q:default}:retry") == 0
    # A second later (five polls of the retry set), nothing has run again.
    wait_for_beats_over(rc, identities(rc)[0], 1.0, worker)
    assert [runs(rc, jid) for jid in jids if jid] == [1, 1]
    assert rc.zcard("cogworker:{q:default}:retry") == 0
    assert max_retries(False) == max_retries(0) == 0
