"""A scrape of 100 queues, 1,000 processes and 1,000 job classes with metrics (and 1,000
entries in each sorted set) costs ten round trips (an empty Redis: six), 10 commands per
queue, 3 per process, and one per class it covers (`metrics_max_classes`, 200)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import redis
from litestar.testing import TestClient

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app
from cogworker.domain.class_cap import DEFAULT_LIMIT
from tests.support.sets import add_to_set
from tests.web.test_metrics_endpoint import scraped

QUEUES, PROCESSES, ENTRIES, CLASSES = 100, 1_000, 1_000, 1_000
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


class CountingConnection(redis.Connection):
    """A connection that counts what it sends: one send is one round trip."""

    sends = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.sends += 1
        super().send_packed_command(command, check_health)


def _seed(raw: redis.Redis, queues: int, processes: int, entries: int) -> None:
    pipe = raw.pipeline(transaction=False)
    for number in range(queues):
        name = f"queue{number:03d}"
        pipe.sadd(keys.QUEUES, name)
        job = {"class": "x.Y", "queue": name, "jid": f"j{number}", "args": [], "created_at": 1.7e9}
        pipe.lpush(keys.queue(name), *[json.dumps(job)] * 10)
    for number in range(processes):
        identity = f"host{number % 50}:{number}:abcdef"
        pipe.sadd(keys.PROCESSES, identity)
        pipe.hset(keys.process(identity), mapping={"hostname": f"host{number % 50}",
                                                   "concurrency": 10, "beat": 1.7e9})  # fmt: skip
        pipe.hset(keys.workers(identity), mapping={"t1": "{}", "t2": "{}"})
    for key in (keys.schedule("queue000"), keys.retry("queue000"), keys.dead("queue000")):
        add_to_set(pipe, key, {f'{{"jid": "{key}{n}"}}': n for n in range(entries)})
    pipe.execute()


def _seed_classes(raw: redis.Redis, queues: int, classes: int) -> None:
    """`classes` job classes with metrics, spread over `queues` queues, as settling writes
    them (a total hash with a few buckets, the queue's registry, the registry of parts)."""
    pipe = raw.pipeline(transaction=False)
    for number in range(classes):
        queue, name = f"queue{number % queues:03d}", f"app.jobs.Job{number:04d}"
        pipe.sadd(keys.PARTS, queue)
        pipe.zadd(keys.metrics_classes(queue), {name: 1.7e9})
        pipe.hset(keys.metrics_total(queue, name),
                  mapping={"f": 2, "t": 4_500_000, "5": 10, "9": 15, "14": 5})  # fmt: skip
    pipe.execute()


def _commands(raw: redis.Redis) -> int:
    return sum(int(value["calls"]) for value in raw.info("commandstats").values())


def command_cost(raw: redis.Redis, request: Callable[[], httpx.Response]) -> tuple[int, str]:
    """The commands Redis ran for `request` (after a first one warms up), and its text."""
    request()
    raw.config_resetstat()
    before = _commands(raw)
    text = request().text
    return _commands(raw) - before - 1, text  # the INFO that counts counts itself


def _scrape(config: cogworker.Config, raw: redis.Redis) -> tuple[int, int, float, str]:
    """Round trips, commands and seconds of one scrape (after a first one warms up)."""
    counting = redis.Redis(connection_pool=redis.ConnectionPool.from_url(
        config.redis_url, connection_class=CountingConnection))  # fmt: skip
    with TestClient(create_app(config, client=counting)) as client:
        client.get("/metrics")
        raw.config_resetstat()
        before_commands, before_sends = _commands(raw), CountingConnection.sends
        started = time.perf_counter()
        text = client.get("/metrics").text
        elapsed = time.perf_counter() - started
        sends = CountingConnection.sends - before_sends
        commands = _commands(raw) - before_commands - 1  # the INFO that counts counts itself
    counting.close()
    return sends, commands, elapsed, text


def test_a_scrape_costs_at_most_ten_round_trips_whatever_the_size(
    config: cogworker.Config, raw: redis.Redis
) -> None:
    """Empty, then 100 queues, 1,000 processes and 1,000 classes: at most 10 round trips; the
    commands are 12, plus 10 per queue (one reads its classes, one its pause, one its counters
    for the totals, one for its own figures and one each for the sizes of its scheduled,
    retry and dead sets), 3 per process and 1 per covered class (the 200 that ran last:
    all ran at once here, so the last by name)."""
    empty_trips, empty_commands, empty_time, empty_text = _scrape(config, raw)
    _seed(raw, QUEUES, PROCESSES, ENTRIES)
    _seed_classes(raw, QUEUES, CLASSES)
    trips, commands, elapsed, text = _scrape(config, raw)
    samples = scraped(text)
    assert samples[("cogworker_processes", ())] == PROCESSES
    assert samples[("cogworker_dead_jobs", ())] == ENTRIES
    assert samples[("cogworker_queue_jobs", (("queue", "queue099"),))] == 10
    assert sum(value for (name, _), value in samples.items()
               if name == "cogworker_process_busy") == 2 * PROCESSES  # fmt: skip
    assert samples[("cogworker_job_runs_total", (("class", "app.jobs.Job0999"),))] == 30
    report = (
        f"/metrics scrape: empty Redis: {empty_trips} round trips, {empty_commands} commands, "
        f"{empty_time * 1000:.0f} ms, {len(empty_text.encode()):,} bytes\n"
        f"/metrics scrape: {QUEUES} queues, {PROCESSES:,} processes, {CLASSES:,} classes, "
        f"{ENTRIES:,} entries per sorted set: {trips} round trips, {commands} commands, "
        f"{elapsed * 1000:.0f} ms, {len(text.encode()):,} bytes\n"
    )
    print("\n" + report)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "metrics-scrape.txt").write_text(report)
    # With nothing to list, 4 pipelines are empty; the totals read the migrated part's
    # counters (`adapters.parts.MIGRATED`) whatever the parts.
    assert (empty_trips, empty_commands) == (6, 12)
    assert (trips, commands) == (10, 12 + 10 * QUEUES + 3 * PROCESSES + DEFAULT_LIMIT)
