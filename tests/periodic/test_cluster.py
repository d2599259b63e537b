"""Several workers, one schedule: each tick enqueued once, never over a running run, and a
running lock whose process was killed lets go when its TTL is up."""

from __future__ import annotations

import itertools
import math
import time

import redis

from cogworker.adapters import redis_keys as keys
from tests.periodic import jobs
from tests.periodic.conftest import StartWorker
from tests.periodic.helpers import claim_of, entry, runs, workers_up
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

#: How long the three workers run the one-second job together.
WINDOW = 12.0


def test_three_workers_enqueue_each_tick_of_a_one_second_job_exactly_once(
    rc: redis.Redis, start_worker: StartWorker
) -> None:
    """3 workers on `* * * * * *` for 12 s: every tick while all were up ran once, none twice."""
    workers = [start_worker("every_second") for _ in range(3)]
    workers_up(rc, 3, *workers)
    up_since = time.time()
    wait_until(lambda: time.time() >= up_since + WINDOW, WINDOW + 5)
    up_until = time.time()
    assert all(worker.is_running for worker in workers)
    # Whole seconds inside the window; the first and last partial seconds aside.
    expected = {float(tick) for tick in range(math.ceil(up_since) + 1, math.floor(up_until))}
    wait_until(
        lambda: expected <= {run.tick for run in runs(rc)},
        15,
        message=lambda: f"ticks never run: {sorted(expected - {run.tick for run in runs(rc)})}",
    )

    observed = runs(rc)
    ticks = [run.tick for run in observed]
    assert len(ticks) == len(set(ticks)), f"ticks run twice: {sorted(ticks)}"
    assert len({run.jid for run in observed}) == len(observed)
    assert all(run.name == "tick" for run in observed)
    # The one claim of each tick names the run that ran for it.
    assert all(claim_of(rc, "tick", run.tick) == run.jid for run in observed)
    stored = entry(rc, "tick")
    assert stored is not None
    assert (stored["cron"], stored["tz"], stored["args"]) == ("* * * * * *", "UTC", [])
    assert stored["class"] == jobs.Tick.class_path()
    assert stored["last_run"] >= max(expected)
    assert stored["next_run"] > stored["last_run"]


def test_a_periodic_job_never_starts_while_its_previous_run_still_runs(
    rc: redis.Redis, start_worker: StartWorker
) -> None:
    """A 2.5 s job due every second on 3 workers: runs never overlap; the ticks that came due
    meanwhile were skipped, not queued for later."""
    workers = [start_worker("overlapping") for _ in range(3)]
    workers_up(rc, 3, *workers)
    wait_until(
        lambda: sum(run.ended is not None for run in runs(rc)) >= 4,
        40,
        message=lambda: f"runs: {runs(rc)}\n{workers[0].log_tail()}",
    )

    observed = runs(rc)
    for before, after in itertools.pairwise(observed):
        assert before.ended is not None
        assert after.started >= before.ended, f"{after} started while {before} ran"
        assert after.tick - before.tick >= 3
        for tick in range(int(before.tick) + 1, int(after.tick)):
            assert claim_of(rc, "slow", tick) == "skipped"
    # Each run started on its own tick's heels: nothing piled up behind a running one.
    assert all(run.started - run.tick < 1.5 for run in observed)


def test_a_killed_runs_lock_expires_after_its_ttl_and_the_schedule_goes_on(
    rc: redis.Redis, start_worker: StartWorker
) -> None:
    """kill -9 of the worker running a periodic job: its running lock, kept alive by the
    heartbeat past its TTL until then, expires within the TTL; then the next tick runs."""
    ttl = jobs.hanging.periodic_lock_ttl
    lock = keys.periodic_running("default", "hang")
    workers = [start_worker("hanging") for _ in range(2)]
    workers_up(rc, 2, *workers)
    first = wait_until(lambda: next(iter(runs(rc)), None), 20, message=workers[0].log_tail)

    # The heartbeat renews the lock while the run goes on; every tick meanwhile is skipped.
    wait_until(lambda: time.time() >= first.started + ttl + 1, ttl + 5)
    assert rc.get(lock) == first.jid.encode()
    assert [run.jid for run in runs(rc)] == [first.jid]

    [victim] = [worker for worker in workers if worker.pid == first.pid]
    victim.kill()
    killed_at = time.time()
    wait_until(
        lambda: rc.get(lock) != first.jid.encode(), ttl + 2, message="the lock never expired"
    )
    assert time.time() - killed_at <= ttl + 2
    assert claim_of(rc, "hang", math.floor(killed_at) + 1) == "skipped"

    second = wait_until(
        lambda: next((run for run in runs(rc) if run.jid != first.jid), None),
        10,
        message=lambda: f"no run after the lock expired:\n{workers[0].log_tail()}",
    )
    assert second.pid != first.pid
    assert second.tick > killed_at
    assert rc.get(lock) == second.jid.encode()
