"""The marked runs of a gone process, filed at its recovery instead of requeued: one its
pulse ended past its hard limit (a timeout, "hard"), one a cancel was sent to (cancelled);
a mark left by a run that was settled after all doesn't touch the later run."""

from __future__ import annotations

import json
import logging

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.run_marks import MarkStore, hard_timeout_value
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.app.worker.marked_ends import MarkedEnds
from cogworker.domain import payload
from cogworker.domain.job import JobRecord

GONE = "gone:1:a"
HELD = keys.in_progress("default", GONE)


def held_job(rc: redis.Redis, jid: str, **fields: float) -> bytes:
    """Put a job `jid` on the gone process's in-progress list of "default"; its entry."""
    job = JobRecord(class_name="tests.app.jobs.Nowhere", queue="default", jid=jid, **fields)
    raw = payload.encode(job).encode()
    rc.lpush(HELD, raw)
    return raw


def filer(rc: redis.Redis, redis_url: str) -> MarkedEnds:
    """What a reconciler files marked runs with."""
    config = cogworker.Config(redis_url=redis_url)
    return MarkedEnds(SettleStore(rc), MarkStore(rc), config, logging.getLogger("test"))


def test_a_run_its_pulse_ended_is_filed_as_a_hard_timeout(rc: redis.Redis, redis_url: str) -> None:
    """Marked timed out: off the list, filed for retry as JobTimeoutError, timed out
    "hard", its mark gone; an unmarked neighbour is left for the requeue."""
    held_job(rc, "a" * 24)
    other = held_job(rc, "b" * 24)
    rc.set(keys.hard_timeout_mark("default", "a" * 24), hard_timeout_value(100.0, 2.0, 1.0))
    assert filer(rc, redis_url).file_marked(GONE, "default") == 1
    assert rc.lrange(HELD, 0, -1) == [other]
    [attempt] = [json.loads(a) for a in rc.lrange(keys.job_attempts("default", "a" * 24), 0, -1)]
    assert attempt["error_class"] == "cogworker.exceptions.JobTimeoutError"
    assert (attempt["outcome"], attempt["timed_out"]) == ("retrying", "hard")
    assert rc.zcard(keys.retry("default")) == 1
    assert not rc.exists(keys.hard_timeout_mark("default", "a" * 24))


def test_a_run_a_cancel_was_sent_to_ends_cancelled(rc: redis.Redis, redis_url: str) -> None:
    """Marked cancelled (and timed out too: the cancel wins): off the list, cancelled,
    counted, not retried."""
    held_job(rc, "c" * 24)
    MarkStore(rc).mark_cancelled("default", "c" * 24)
    rc.set(keys.hard_timeout_mark("default", "c" * 24), hard_timeout_value(100.0, 2.0, 1.0))
    assert filer(rc, redis_url).file_marked(GONE, "default") == 1
    assert rc.llen(HELD) == 0
    [attempt] = [json.loads(a) for a in rc.lrange(keys.job_attempts("default", "c" * 24), 0, -1)]
    assert attempt["outcome"] == "cancelled"
    assert rc.get(keys.stat("default", "cancelled")) == b"1"
    assert rc.zcard(keys.retry("default")) == rc.zcard(keys.dead("default")) == 0


def test_a_mark_older_than_the_runs_last_failure_is_dropped(
    rc: redis.Redis, redis_url: str
) -> None:
    """The run held failed after the marked run started (that run was settled after all):
    it is a plain orphan, left for the requeue, and the stale mark is deleted."""
    raw = held_job(rc, "d" * 24, failed_at=150.0, retried_at=150.0)
    rc.set(keys.hard_timeout_mark("default", "d" * 24), hard_timeout_value(100.0, 2.0, 1.0))
    assert filer(rc, redis_url).file_marked(GONE, "default") == 0
    assert rc.lrange(HELD, 0, -1) == [raw]
    assert not rc.exists(keys.hard_timeout_mark("default", "d" * 24))
