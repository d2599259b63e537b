"""Issue 16 #18: a server middleware passes other arguments on (`run(args=...)`)."""

from __future__ import annotations

import json
from pathlib import Path

import redis

import cogworker
from tests.faults import oracle
from tests.faults.conftest import StartWorker, registered, stop_all
from tests.faults.jobs_guarded import RecordsArgs, encoded, push_named
from tests.support.processes import wait_until

APP = "tests.faults.jobs_guarded:middleware_config"


def recorded(inspect: redis.Redis, key: str) -> list[object]:
    """The JSON values pushed to `key` by the job or the middleware."""
    return [json.loads(raw) for raw in inspect.lrange(key, 0, -1)]


def test_a_middleware_decodes_the_arguments_a_job_runs_with(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """An encoded job runs with the decoded arguments, which inner layers see; others unchanged."""
    worker = start_worker(APP)
    registered(inspect, 1)
    secret = push_named(
        client,
        RecordsArgs.class_path(),
        args=(encoded(1, "two", {"three": 3}),),
        extra={"encoded": True},
    )
    plain = client.enqueue(RecordsArgs, 5)
    assert plain is not None
    wait_until(lambda: {secret, plain} <= oracle.finished(oracle_file), 30, message=worker.log_tail)
    assert recorded(inspect, f"ran-with:{secret}") == [[1, "two", {"three": 3}]]
    assert recorded(inspect, f"seen:{secret}") == [[1, "two", {"three": 3}]]
    assert recorded(inspect, f"ran-with:{plain}") == [[5]]
    assert recorded(inspect, f"seen:{plain}") == [[5]]
    stop_all(worker)
    oracle.assert_nothing_left_behind(inspect)
