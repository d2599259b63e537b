"""Per-key limits with real worker processes: a concurrency limit never exceeded, a place
freed within the orphan threshold of its process's kill -9, a rate limit kept within its
window (tests/app/limit_jobs.py holds the jobs and the config)."""

from __future__ import annotations

import itertools
import json

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, wait_for_processes
from tests.app.limit_jobs import FivePerSecond, HoldsOne, SharesOne, ThreeAtOnce
from tests.support.processes import wait_until

APP = "tests.app.limit_jobs:limits_config"
KEYS = [f"k{n}" for n in range(5)]
#: The orphan threshold of limits_config, in milliseconds.
THRESHOLD_MS = 2000


def _count(rc: redis.Redis, key: str) -> int:
    return int(rc.get(key) or 0)


def test_no_key_ever_runs_more_than_its_concurrency_limit(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """2 processes x 20 threads, 1,000 jobs over 5 keys under Concurrency(max=3): no key ever
    has more than 3 running (each job counts itself in and out, the peak kept in one script),
    every job runs exactly once, and no refusal is counted as a failure or a retry."""
    jobs = [[key, 0.01] for key, _ in zip(itertools.cycle(KEYS), range(1000), strict=False)]
    jids = [jid for jid in client.enqueue_many(ThreeAtOnce, jobs) if jid]
    started = [workers.start(APP, concurrency=20) for _ in range(2)]
    wait_for_processes(rc, 2, *started)

    wait_until(
        lambda: rc.scard("ran") == len(jids),
        120.0,
        message=lambda: f"{rc.scard('ran')} of {len(jids)} ran; log:\n{started[0].log_tail()}",
    )
    peaks = {key: _count(rc, f"peak:{key}") for key in KEYS}
    assert all(1 <= peak <= 3 for peak in peaks.values()), peaks
    assert max(peaks.values()) == 3, peaks  # the limit was reached, not only respected
    assert {_count(rc, f"runs:{jid}") for jid in jids} == {1}
    assert _count(rc, keys.stat("default", "processed")) == len(jids)
    assert _count(rc, keys.stat("default", "failed")) == 0
    assert rc.zcard(keys.retry("default")) == 0
    holders = [keys.limit("default", "concurrency", ThreeAtOnce.class_path(), k) for k in KEYS]
    assert [rc.zcard(key) for key in holders] == [0] * len(KEYS)  # every place let go


def _redis_ms(rc: redis.Redis) -> int:
    seconds, micros = rc.time()
    return int(seconds * 1000 + micros // 1000)


@pytest.mark.parametrize("taken_by", ["its start", "its fetch"])
def test_a_place_held_by_a_killed_process_frees_within_the_orphan_threshold(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, taken_by: str
) -> None:
    """A job holding its key's only place, taken as it starts (the class's first job in
    its process) or by the fetch that moved it (a process fetching two queues, so with
    the fetch script only, that met the class): the heartbeat renews the place while the
    job runs; the job dies with its process (kill -9), and its place runs out at most one
    orphan threshold after the kill (nothing renews it).  The key serves again: a job of
    another class naming the same limit runs."""
    queues = ["default"] if taken_by == "its start" else ["default", "other"]
    first = workers.start(APP, concurrency=2, queues=queues)
    wait_for_processes(rc, 1, first)
    if taken_by == "its fetch":
        learner = client.enqueue(HoldsOne, "learn")
        wait_until(lambda: rc.sismember("holding", learner), 20.0, message=first.log_tail)
    holder = client.enqueue(HoldsOne, "shared")
    wait_until(lambda: rc.sismember("holding", holder), 20.0, message=first.log_tail)
    place = keys.limit("default", "concurrency", "one", "shared")
    [(_, seen_until)] = rc.zrange(place, 0, -1, withscores=True)
    wait_until(lambda: _redis_ms(rc) > seen_until, 20.0, message="Redis's clock stands still")
    [(_, renewed_until)] = rc.zrange(place, 0, -1, withscores=True)
    assert renewed_until > seen_until, first.log_tail()
    first.kill()
    killed_at = _redis_ms(rc)  # after the kill: no renewal can come later
    [(_, runs_out)] = rc.zrange(place, 0, -1, withscores=True)
    assert runs_out <= killed_at + THRESHOLD_MS

    rc.set("release", 1)  # the holder's recovered run, if it comes first, ends at once
    waiter = client.enqueue(SharesOne, "shared")
    second = workers.start(APP, concurrency=2)
    wait_until(lambda: _count(rc, f"runs:{waiter}") == 1, 20.0, message=second.log_tail)


def test_a_clean_stop_lets_go_of_the_places_of_the_jobs_it_hands_back(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """SIGTERM while a job holds its key's place and won't finish: the job goes back to its
    queue and its place is let go of as the process exits, not left to run out."""
    worker = workers.start(APP, concurrency=2)
    wait_for_processes(rc, 1, worker)
    holder = client.enqueue(HoldsOne, "stop")
    wait_until(lambda: rc.sismember("holding", holder), 20.0, message=worker.log_tail)
    place = keys.limit("default", "concurrency", "one", "stop")
    assert rc.zcard(place) == 1
    assert worker.terminate() == 0
    assert rc.zcard(place) == 0
    assert [json.loads(raw)["jid"] for raw in rc.lrange(keys.queue("default"), 0, -1)] == [holder]


def test_a_rate_limit_is_kept_within_every_window(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """15 jobs of one key under Rate(max=5, per=1): all run, and no second (less 50 ms for
    the step from the limit's check to the job's own clock reading) holds more than 5
    starts, while another key's jobs are not held back by it."""
    jids = [jid for jid in client.enqueue_many(FivePerSecond, [["a"]] * 15) if jid]
    started = [workers.start(APP, concurrency=10)]
    wait_for_processes(rc, 1, *started)
    wait_until(lambda: rc.llen("starts") == len(jids), 30.0, message=started[0].log_tail)
    starts = sorted(int(ms) for ms in rc.lrange("starts", 0, -1))
    for i, start in enumerate(starts):
        assert sum(start <= other < start + 950 for other in starts[i:]) <= 5, starts
