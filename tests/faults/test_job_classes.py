"""Issue 16 #14 and #23: a perform whose body would never run is refused, and a worker
with `Config.job_modules` imports no module a payload names outside them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import jobs, oracle
from tests.faults.conftest import StartWorker, registered, stop_all
from tests.faults.jobs_guarded import ReturnsCoroutine, push_named
from tests.support.processes import CogworkerProcess, wait_until

GUARDED = "tests.faults.app_guarded:config_with_job_modules"


def dead_entry(inspect: redis.Redis, jid: str, worker: CogworkerProcess) -> dict[str, object]:
    """Wait until `jid` is the one dead entry and return it."""
    [raw] = wait_until(
        lambda: inspect.zrange(keys.dead("default"), 0, -1), 30, message=worker.log_tail
    )
    entry: dict[str, object] = json.loads(raw)
    assert entry["jid"] == jid
    return entry


def test_generator_performs_are_refused_when_the_class_is_defined() -> None:
    """A perform that yields (sync or async) raises TypeError at the class statement."""
    with pytest.raises(TypeError, match="is a generator function"):

        class Chunks(cogworker.Job):
            def perform(self) -> Iterator[int]:  # type: ignore[override]  # under test
                yield 1

    with pytest.raises(TypeError, match="is an async generator function"):

        class Stream(cogworker.Job):
            async def perform(self) -> AsyncIterator[int]:  # type: ignore[override]  # under test
                yield 1


def test_a_perform_returning_a_coroutine_fails_the_run(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """A coroutine handed back is a failure (TypeError), never counted as done."""
    worker = start_worker()
    registered(inspect, 1)
    jid = client.enqueue(ReturnsCoroutine)
    assert jid is not None
    entry = dead_entry(inspect, jid, worker)
    assert entry["error_class"] == "TypeError"
    assert "perform returned coroutine" in str(entry["error_message"])
    stop_all(worker)
    assert "never awaited" not in worker.log_text()
    assert oracle.runs(oracle_file)[0][jid] == 1
    assert (
        int(inspect.get("cogworker:{q:default}:stat:processed") or 0) == 1
    )  # counted, as a failure
    assert int(inspect.get("cogworker:{q:default}:stat:failed") or 0) == 1


def test_a_payload_naming_a_module_outside_job_modules_imports_nothing(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """The job is dead as an unknown class naming job_modules; the module never ran; others do."""
    worker = start_worker(GUARDED)
    registered(inspect, 1)
    jid = push_named(client, "tests.faults.imports_write_a_key.Anything")
    entry = dead_entry(inspect, jid, worker)
    assert entry["error_class"] == "cogworker.exceptions.UnknownJobClassError"
    assert "is not in Config.job_modules" in str(entry["error_message"])
    allowed = client.enqueue(jobs.Count, 1)
    assert allowed is not None
    wait_until(lambda: allowed in oracle.finished(oracle_file), 30, message=worker.log_tail)
    stop_all(worker)
    assert inspect.get("imported:imports_write_a_key") is None
    oracle.assert_nothing_left_behind(inspect)


def test_job_modules_must_be_module_names() -> None:
    """A Config naming something that isn't a module name is a ConfigError saying so."""
    with pytest.raises(cogworker.ConfigError, match=r"'myapp/jobs' is not a module name"):
        cogworker.Config(job_modules=("myapp/jobs",))
    assert cogworker.Config(job_modules="myapp.jobs").job_modules == ("myapp.jobs",)
