"""A worker starting on a stored schedule: catching up on missed ticks, replacing or merging
the schedule, and refusing a bad periodic entry before anything is enqueued."""

from __future__ import annotations

import itertools
import json
import time

import attrs
import pytest
import redis

from cogworker import Periodic
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import encode_entry
from cogworker.domain.cron import ScheduleEntry
from tests.periodic import jobs
from tests.periodic.conftest import StartWorker
from tests.periodic.helpers import entry, far_minute_cron, runs
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

HOUR = 3600.0


def seed(rc: redis.Redis, stored: ScheduleEntry) -> None:
    """Store an entry as a worker that ran before would have left it."""
    rc.hset(keys.PERIODIC_SCHEDULE, stored.name, encode_entry(stored))


def hourly_entry(cron: str, *, last: float, name: str = "hourly") -> ScheduleEntry:
    """The stored entry of an hourly Tick job whose last run was at `last`."""
    spec = Periodic(cron=cron, job=jobs.Tick, name=name).entry(last - 10 * HOUR)
    return attrs.evolve(spec, last_tick=last, last_run=last, last_jid="before-the-downtime")


def settled(rc: redis.Redis, latest: float) -> bool:
    """Whether the worker has handled every tick up to `latest` and its runs have all ended."""
    stored = entry(rc, "hourly")
    return (
        stored is not None
        and stored["last_tick"] == latest
        and rc.llen(keys.queue("default")) == 0
        and not rc.exists(keys.periodic_running("default", "hourly"))
    )


@pytest.mark.parametrize(
    ("config", "kept"),
    [("catch_up_none", 0), ("catch_up_last", 1), ("catch_up_all_3", 3), ("catch_up_all", 5)],
)
def test_missed_ticks_get_what_the_catch_up_mode_says(
    config: str, kept: int, rc: redis.Redis, start_worker: StartWorker
) -> None:
    """Five hourly ticks missed: "none" runs none, "last" the latest, "all" the latest up to its
    limit (3 of 5, or all 5 of 10), oldest first and one after another."""
    cron, latest = far_minute_cron(time.time())
    missed = [latest - HOUR * back for back in range(4, -1, -1)]
    seed(rc, hourly_entry(cron, last=missed[0] - HOUR / 2))
    worker = start_worker(config, cron=cron)

    wait_until(lambda: settled(rc, latest), 20, message=worker.log_tail)
    observed = runs(rc)
    assert [run.tick for run in observed] == (missed[len(missed) - kept :] if kept else [])
    for before, after in itertools.pairwise(observed):
        assert before.ended is not None
        assert after.started >= before.ended
    stored = entry(rc, "hourly")
    assert stored is not None
    assert stored["last_run"] == (latest if kept else missed[0] - HOUR / 2)
    assert stored["next_run"] == latest + HOUR


@pytest.mark.parametrize(("config", "kept"), [("replacing", False), ("merging", True)])
def test_start_up_replaces_or_merges_the_stored_schedule(
    config: str, kept: bool, rc: redis.Redis, start_worker: StartWorker
) -> None:
    """Replace: a stored job the config doesn't list is removed; merge: it stays.  Either way
    the configured job takes the config's cron and keeps its stored last run."""
    cron, latest = far_minute_cron(time.time())
    old = hourly_entry("0 0 1 1 *", last=latest)
    other = hourly_entry(cron, last=latest, name="someone-elses")
    seed(rc, old)
    seed(rc, other)
    worker = start_worker(config, cron=cron)

    wait_until(lambda: (entry(rc, "hourly") or {}).get("cron") == cron, 20, message=worker.log_tail)
    stored = entry(rc, "hourly")
    assert stored is not None
    assert (stored["last_run"], stored["last_jid"]) == (latest, "before-the-downtime")
    assert stored["added_at"] == old.added_at
    assert (entry(rc, "someone-elses") == json_of(other)) is kept
    assert (entry(rc, "someone-elses") is None) is not kept
    assert runs(rc) == []


def json_of(stored: ScheduleEntry) -> dict[str, object]:
    """An entry as `entry()` reads it back."""
    return dict(json.loads(encode_entry(stored)))


@pytest.mark.parametrize(
    ("config", "named", "problem"),
    [
        ("bad_cron", "broken-cron", "invalid cron expression '0 25 * * *'"),
        ("bad_tz", "far-away", "unknown time zone 'Mars/Olympus'"),
        ("bad_class", "hidden", "a worker can't import its job class"),
    ],
)
def test_a_bad_periodic_entry_stops_the_worker_before_anything_is_enqueued(
    config: str, named: str, problem: str, rc: redis.Redis, start_worker: StartWorker
) -> None:
    """`cogworker work APP` exits 2 (a setting error) with one line naming the entry and
    what is wrong with it; nothing reaches Redis."""
    worker = start_worker(config)
    assert worker.wait_for_exit(30) == 2
    log = worker.log_text()
    assert f"periodic job '{named}': {problem}" in log
    assert "Traceback" not in log
    assert rc.dbsize() == 0
