"""Bad input never stalls a worker: unknown classes, unparseable payloads, wrong key types,
and non-JSON arguments are each a clear error, and nothing is lost."""

from __future__ import annotations

import datetime as dt
import json
import math
import time

import pytest
import redis

import cogworker
from cogworker.adapters import key_guard
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, queue_payloads, runs, wait_for_processes, zset_entries
from tests.app.jobs import Record
from tests.support.processes import CogworkerProcess, wait_until

MISSING_CLASS = "tests.app.jobs.DoesNotExist"


def push_raw(rc: redis.Redis, queue: str, raw: str) -> None:
    """Put a payload on a queue by hand, as another (older, buggy) client might."""
    rc.sadd("cogworker:queues", queue)
    rc.lpush(keys.queue(queue), raw)


def runs_next_job(rc: redis.Redis, client: cogworker.Client, worker: CogworkerProcess) -> None:
    """Enqueue a normal job and wait until the worker has run it."""
    jid = client.enqueue(Record, "next")
    assert jid is not None
    wait_until(
        lambda: runs(rc, jid) == 1,
        15.0,
        message=lambda: f"the next job never ran; log:\n{worker.log_tail()}",
    )


def test_unknown_job_class_is_retried_then_dead_and_the_worker_goes_on(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """A job whose class can't be imported is retried (default backoff) with an
    UnknownJobClassError naming the class, dead once its budget is spent; the worker goes on."""
    now = time.time()
    job = {
        "class": MISSING_CLASS,
        "args": [1],
        "jid": "0123456789abcdef01234567",
        "queue": "default",
        "retry": 1,
        "created_at": now,
        "enqueued_at": now,
    }
    push_raw(rc, "default", json.dumps(job))
    worker = workers.start()

    retries = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:retry"),
        15.0,
        message=lambda: f"no retry entry; log:\n{worker.log_tail()}",
    )
    [(entry, score)] = retries
    assert entry["jid"] == job["jid"]
    assert entry["class"] == MISSING_CLASS
    assert entry["args"] == [1]
    assert entry["retry_count"] == 1
    assert "UnknownJobClassError" in entry["error_class"]
    assert MISSING_CLASS in entry["error_message"]
    assert entry["failed_at"] + 16 <= score < entry["failed_at"] + 16 + 30 * 2

    # Time passes (the test's shortcut): the retry is due now; its second failure ends it.
    [raw] = rc.zrange("cogworker:{q:default}:retry", 0, -1)
    rc.zadd("cogworker:{q:default}:retry", {raw: time.time()}, xx=True)
    dead = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:dead"),
        15.0,
        message=lambda: f"never dead; log:\n{worker.log_tail()}",
    )

    [(entry, _)] = dead
    assert entry["jid"] == job["jid"]
    assert entry["class"] == MISSING_CLASS
    assert "UnknownJobClassError" in entry["error_class"]
    assert MISSING_CLASS in entry["error_message"]
    assert rc.zcard("cogworker:{q:default}:retry") == 0
    runs_next_job(rc, client, worker)
    assert worker.is_running


@pytest.mark.parametrize("raw", ["{not json", '{"queue": "default", "jid": "x"}', "[1, 2]"])
def test_unparseable_payload_goes_to_dead_keeping_its_text(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, raw: str
) -> None:
    """A payload that isn't a job lands in dead as an `unparseable_job` entry with the raw
    text, and the worker runs the next job."""
    push_raw(rc, "default", raw)
    worker = workers.start()
    [identity] = wait_for_processes(rc, 1, worker)

    dead = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:dead"),
        15.0,
        message=lambda: f"not filed in dead; log:\n{worker.log_tail()}",
    )

    [(entry, _)] = dead
    assert entry["class"] == "unparseable_job"
    assert entry["raw"] == raw
    assert entry["error_message"]
    assert "queue" not in entry  # so it can't be put back on one by mistake
    runs_next_job(rc, client, worker)
    assert rc.llen(keys.queue("default")) == 0
    # The next job's ack is written by the acker a moment after the job ran.
    wait_until(
        lambda: rc.llen(f"cogworker:{{q:default}}:inprogress:{identity}") == 0,
        10.0,
        message=lambda: f"the in-progress list never emptied; log:\n{worker.log_tail()}",
    )
    assert worker.is_running


def test_queue_key_of_wrong_type_is_named_in_the_log_and_other_queues_run(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """With `cogworker:{q:broken}:queue` a string, a worker serving broken and default logs an
    error naming the key and still runs jobs from default."""
    rc.set(keys.queue("broken"), "x")
    worker = workers.start(queues=["broken", "default"])
    wait_for_processes(rc, 1, worker)

    runs_next_job(rc, client, worker)

    wait_until(
        lambda: keys.queue("broken") in worker.log_text(),
        10.0,
        message=lambda: f"the log never named the key; log:\n{worker.log_tail()}",
    )
    error_lines = [line for line in worker.log_text().splitlines() if "ERROR" in line]
    assert any(keys.queue("broken") in line for line in error_lines), worker.log_tail()
    assert rc.get(keys.queue("broken")) == b"x"
    assert worker.is_running


def test_queue_key_turned_wrong_type_while_running_is_named_and_other_queues_run(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """When `cogworker:{q:broken}:queue` becomes a string under a running worker serving broken and
    default, the worker logs an error naming the key and still runs jobs from default."""
    worker = workers.start(queues=["broken", "default"])
    wait_for_processes(rc, 1, worker)
    runs_next_job(rc, client, worker)

    rc.set(keys.queue("broken"), "x")

    runs_next_job(rc, client, worker)
    wait_until(
        lambda: keys.queue("broken") in worker.log_text(),
        10.0,
        message=lambda: f"the log never named the key; log:\n{worker.log_tail()}",
    )
    assert rc.get(keys.queue("broken")) == b"x"
    assert worker.is_running


NOT_JSON = [
    pytest.param({1, 2}, r"args\[1\] is set", id="set"),
    pytest.param((1, 2), r"args\[1\] is tuple", id="tuple"),
    pytest.param(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), r"args\[1\] is datetime", id="datetime"),
    pytest.param({"ok": {1: "one"}}, r"args\[1\]\['ok'\] key 1 is int", id="int-key"),
    pytest.param([1.0, math.nan], r"args\[1\]\[1\] is float nan", id="nan"),
]


@pytest.mark.parametrize(("bad", "named"), NOT_JSON)
def test_non_json_argument_is_a_type_error_at_enqueue_and_nothing_is_pushed(
    rc: redis.Redis, client: cogworker.Client, bad: object, named: str
) -> None:
    """A non-JSON argument makes enqueue, enqueue_in and enqueue_many raise a TypeError naming
    it, and nothing reaches Redis."""
    with pytest.raises(TypeError, match=named):
        client.enqueue(Record, "fine", bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=named):
        client.enqueue_in(5, Record, "fine", bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=named):
        client.enqueue_many(Record, [["fine", 1], ["fine", bad], ["fine", 2]])  # type: ignore[list-item]

    assert rc.dbsize() == 0
    assert queue_payloads(rc, "default") == []


def test_a_layout_key_of_the_wrong_type_is_named_and_the_worker_stops(
    rc: redis.Redis, workers: Workers
) -> None:
    """`cogworker:layout` not a string: the layout can't be told, so the worker names the
    key as KeyGuard does and exits 2 rather than retry the read for ever."""
    rc.hset(keys.LAYOUT, "number", "1")
    worker = workers.start()
    assert worker.wait_for_exit(30) == 2
    assert "KeyGuard: cogworker:layout is a hash, cogworker needs a string" in worker.log_text()
    assert key_guard.wrong_types(rc, key_guard.expected_types(())) == [
        key_guard.WrongType(key=keys.LAYOUT, actual="hash", expected="string")
    ]


def test_a_process_key_of_the_wrong_type_is_named_at_start(
    rc: redis.Redis, workers: Workers
) -> None:
    """KeyGuard also checks registered processes' keys and names one of the wrong type."""
    rc.sadd("cogworker:processes", "ghost:1:x")
    rc.set(keys.memory_history("ghost:1:x"), "not a sorted set")
    worker = workers.start()
    wait_until(
        lambda: f"KeyGuard: {keys.memory_history('ghost:1:x')} is a string" in worker.log_text(),
        20,
        message=worker.log_tail,
    )
