"""`cogworker periodic remove`: a stored periodic job taken off the schedule stops being
enqueued by the workers already running, which tend what Redis holds."""

from __future__ import annotations

import math
import time

import redis

from cogworker.adapters import redis_keys as keys
from tests.app.cli_runner import Cli
from tests.periodic.conftest import StartWorker
from tests.periodic.helpers import entry, runs, workers_up
from tests.support.processes import wait_until

#: Seconds of ticks after the removal in which no run may start.
QUIET = 4


def test_a_removed_job_is_no_longer_enqueued_by_a_running_worker(
    cli: Cli, rc: redis.Redis, start_worker: StartWorker
) -> None:
    """A worker runs a job every second; once removed from the command line, the entry is
    gone and no tick after the removal runs (a tick claimed as it happened may)."""
    worker = start_worker("every_second")
    workers_up(rc, 1, worker)
    wait_until(lambda: runs(rc), 20, message=worker.log_tail)

    assert cli.json("periodic", "remove", "tick") == [{"name": "tick", "removed": True}]
    removed_at = time.time()
    assert entry(rc, "tick") is None
    wait_until(lambda: time.time() >= removed_at + QUIET, QUIET + 5)
    late = [run for run in runs(rc) if run.tick > math.ceil(removed_at) + 1]
    assert late == [], worker.log_tail()
    assert worker.is_running


def test_remove_says_what_it_did_and_exits_1_for_a_name_not_found(
    cli: Cli, rc: redis.Redis
) -> None:
    """Each name is answered (removed, not found); one not found exits 1; --all takes every
    entry, readable or not; an empty schedule with --all exits 1; NAME and --all: usage (2)."""
    rc.hset(keys.PERIODIC_SCHEDULE, mapping={"a": "{}", "b": "not json", "c": "{}"})
    answer = cli.run("periodic", "remove", "a", "nope")
    assert (answer.status, answer.lines) == (
        1,
        ["NAME  OUTCOME", "a     removed", "nope  not found"],
    )
    assert cli.json("periodic", "remove", "--all") == [
        {"name": "b", "removed": True},
        {"name": "c", "removed": True},
    ]
    assert not rc.exists(keys.PERIODIC_SCHEDULE)
    empty = cli.run("periodic", "remove", "--all")
    assert empty.status == 1
    assert "the periodic schedule is empty" in empty.stderr
    assert cli.run("periodic", "remove", "a", "--all").status == 2
    assert cli.run("periodic", "remove").status == 2
