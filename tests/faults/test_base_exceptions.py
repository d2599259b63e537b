"""Issue 16 #6: a run ending in a BaseException, or a hostile exception, is filed like any failure.

SystemExit, sys.exit(), KeyboardInterrupt, GeneratorExit from perform, a
job module that exits at import, an exception whose str() raises, a huge
message, a retry_in hook that exits: each run ends in retry or dead with
its error recorded, the worker goes on with other jobs, nothing stays on
its in-progress list, and SIGTERM still stops it cleanly.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.user_hooks import BACKTRACE_LIMIT, MESSAGE_LIMIT
from tests.faults import jobs, jobs_exits, oracle
from tests.faults.conftest import StartWorker, registered, starts_of
from tests.faults.jobs_guarded import push_named
from tests.support.processes import CogworkerProcess, wait_until

SINGLE = "tests.faults.jobs_exits:single_config"


def in_progress_of_the_worker(inspect: redis.Redis) -> int:
    """How many jobs the one registered worker holds in progress."""
    [identity] = inspect.smembers(keys.PROCESSES)
    return int(inspect.llen(keys.in_progress("default", identity.decode())))


def dead_entry(inspect: redis.Redis, jid: str, worker: CogworkerProcess) -> dict[str, object]:
    """Wait until `jid` is in dead and return its entry."""

    def found() -> dict[str, object] | None:
        for raw in inspect.zrange(keys.dead("default"), 0, -1):
            entry: dict[str, object] = json.loads(raw)
            if entry["jid"] == jid:
                return entry
        return None

    return wait_until(found, 30, message=lambda: f"{jid} never dead:\n{worker.log_tail()}")


def goes_on_and_stops(
    worker: CogworkerProcess,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
) -> None:
    """The worker still runs a job, holds nothing in progress, and stops at SIGTERM."""
    jid = client.enqueue(jobs.Count, 1)
    assert jid is not None
    wait_until(lambda: jid in oracle.finished(oracle_file), 30, message=worker.log_tail)
    wait_until(lambda: in_progress_of_the_worker(inspect) == 0, 30, message=worker.log_tail)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait_for_exit(30) == 0, worker.log_tail()
    oracle.assert_nothing_left_behind(inspect)


@pytest.mark.parametrize(
    ("job_class", "error_class", "message"),
    [
        (jobs_exits.RaisesSystemExit, "SystemExit", "3"),
        (jobs_exits.CallsSysExit, "SystemExit", "bye from the job"),
        (jobs_exits.RaisesKeyboardInterrupt, "KeyboardInterrupt", ""),
        (jobs_exits.RaisesGeneratorExit, "GeneratorExit", ""),
        (
            jobs_exits.RaisesUnprintable,
            "tests.faults.jobs_exits.UnprintableError",
            "<UnprintableError: its str() raised>",
        ),
        (
            jobs_exits.RaisesNotesError,
            "tests.faults.jobs_exits.NotesError",
            "with unreadable notes",
        ),
    ],
)
def test_a_base_exception_or_an_unprintable_one_is_filed_in_dead(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    job_class: type[cogworker.Job],
    error_class: str,
    message: str,
) -> None:
    """The run is dead with its error, once; the one-thread worker goes on and stops at SIGTERM."""
    worker = start_worker(SINGLE)
    registered(inspect, 1)
    jid = client.enqueue(job_class)
    assert jid is not None
    entry = dead_entry(inspect, jid, worker)
    assert (entry["error_class"], entry["error_message"]) == (error_class, message)
    assert entry["retry_count"] == 1
    goes_on_and_stops(worker, client, inspect, oracle_file)
    assert starts_of(oracle_file, jid) == 1


def test_a_job_module_that_exits_at_import_fails_the_job(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """A module calling sys.exit() at import: the job is dead, unknown class; the worker lives."""
    worker = start_worker(SINGLE)
    registered(inspect, 1)
    jid = push_named(client, "tests.faults.exits_at_import.Never")
    entry = dead_entry(inspect, jid, worker)
    assert entry["error_class"] == "cogworker.exceptions.UnknownJobClassError"
    assert "SystemExit: this module exits at import" in str(entry["error_message"])
    goes_on_and_stops(worker, client, inspect, oracle_file)


def test_a_huge_error_message_is_filed_clipped(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """A 20 MB message is kept clipped (head and tail) in the dead entry and its traceback."""
    worker = start_worker(SINGLE)
    registered(inspect, 1)
    jid = client.enqueue(jobs_exits.RaisesHugeMessage)
    assert jid is not None
    entry = dead_entry(inspect, jid, worker)
    message, backtrace = str(entry["error_message"]), str(entry["error_backtrace"])
    assert message.startswith("xxx")
    assert "characters left out" in message
    assert len(message) < MESSAGE_LIMIT + 100
    assert len(backtrace) < BACKTRACE_LIMIT + 100
    goes_on_and_stops(worker, client, inspect, oracle_file)


def test_a_retry_in_hook_that_exits_still_files_the_failure(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, oracle_file: Path
) -> None:
    """retry_in calling sys.exit() while the failure is settled: retried by the default backoff."""
    worker = start_worker(SINGLE)
    registered(inspect, 1)
    jid = client.enqueue(jobs_exits.ExitingRetryIn)
    assert jid is not None
    [raw] = wait_until(
        lambda: inspect.zrange(keys.retry("default"), 0, -1), 30, message=worker.log_tail
    )
    entry = json.loads(raw)
    assert (entry["jid"], entry["error_class"]) == (jid, "RuntimeError")
    assert "settling the run raised SystemExit: retry_in exits" in worker.log_text()
    goes_on_and_stops(worker, client, inspect, oracle_file)
