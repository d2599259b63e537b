"""Per-class metrics written by real workers: every run counted once, under two processes
and retries, and the histogram agreeing with the runs' own durations."""

from __future__ import annotations

import json
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.class_metrics import ClassMetricsStore
from cogworker.domain.class_metrics import RunSample, Tally
from tests.app.helpers import Workers, logs, wait_for_processes
from tests.app.jobs import Count, FailsTwiceRetried, NoRetryFalse
from tests.support.processes import wait_until

SUCCESSES, RETRIED, DEAD = 60, 4, 3
#: FailsTwiceRetried runs three times (two retries), failing each time, then dies.
RUNS = SUCCESSES + 3 * RETRIED + DEAD


def _class_runs(rc: redis.Redis, job_class: type[cogworker.Job]) -> Tally:
    """The class's runs as its run history on its queue records them (every one: fewer
    than 100)."""
    name = f"{job_class.__module__}.{job_class.__qualname__}"
    history = keys.class_history(job_class.cogworker_options.queue, name)
    records = [json.loads(entry) for entry in rc.lrange(history, 0, -1)]
    return Tally.of(
        RunSample.of(record["queue"], record["duration"], failed=record["outcome"] != "success")
        for record in records
    )


def _settled(rc: redis.Redis) -> bool:
    return rc.get(keys.stat("default", "processed")) == str(RUNS).encode() and rc.zcard(
        keys.dead("default")
    ) == (RETRIED + DEAD)


def test_two_workers_count_every_run_once_with_retries(
    rc: redis.Redis, workers: Workers, client: cogworker.Client
) -> None:
    """60 successes, 4 jobs failing three times and 3 failing once, on two processes: each
    class's runs and failures are exact, its histogram counts every run, and its time is
    the sum of its runs' durations (to the microsecond each)."""
    for number in range(SUCCESSES):
        client.enqueue(Count, number)
    for number in range(RETRIED):
        client.enqueue(FailsTwiceRetried, number)
    for number in range(DEAD):
        client.enqueue(NoRetryFalse, number)
    started = [workers.start(), workers.start()]
    wait_for_processes(rc, 2, *started)
    wait_until(lambda: _settled(rc), 30.0, message=lambda: logs(*started))

    totals = ClassMetricsStore(rc).totals()
    assert totals.problems == frozenset()
    assert {name: (t.runs, t.failures) for name, t in totals.tallies.items()} == {
        "tests.app.jobs.Count": (SUCCESSES, 0),
        "tests.app.jobs.FailsTwiceRetried": (3 * RETRIED, 3 * RETRIED),
        "tests.app.jobs.NoRetryFalse": (DEAD, DEAD),
    }
    for job_class in (Count, FailsTwiceRetried, NoRetryFalse):
        tally = totals.tallies[f"tests.app.jobs.{job_class.__qualname__}"]
        recorded = _class_runs(rc, job_class)
        assert sum(tally.counts) == tally.runs == recorded.runs
        assert tally.counts == recorded.counts
        # The history rounds each duration to the microsecond, as the metrics do.
        assert abs(tally.micros - recorded.micros) <= tally.runs
    over_the_hour = ClassMetricsStore(rc).over_hours(rc.time()[0], 1).tallies
    assert over_the_hour == totals.tallies


def test_metrics_off_writes_no_metrics(
    rc: redis.Redis, workers: Workers, client: cogworker.Client, tmp_path: Path
) -> None:
    """`metrics = false` in a --config file: the runs are settled, no metrics key written."""
    settings = tmp_path / "cogworker.toml"
    settings.write_text("metrics = false\n")
    for number in range(5):
        client.enqueue(Count, number)
    worker = workers.start(extra_args=["--config", str(settings)])
    wait_until(
        lambda: rc.get(keys.stat("default", "processed")) == b"5", 20.0, message=worker.log_tail
    )
    assert list(rc.scan_iter("cogworker:{q:*}:metrics:*")) == []
    assert ClassMetricsStore(rc).totals().tallies == {}
