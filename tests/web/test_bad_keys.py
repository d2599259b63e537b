"""One bad key flags its own item and the rest of the page renders: a queue key of the wrong
type, a counter that isn't a count, a heartbeat with concurrency=nan, a schedule that isn't a
hash."""

from __future__ import annotations

import time

import redis

import cogworker
from cogworker.adapters import parts
from cogworker.adapters import redis_keys as keys
from cogworker.domain.stats import days_back
from tests.web import jobs
from tests.web.helpers import Web, schedule_entry


def test_a_queue_key_of_the_wrong_type_is_flagged_where_the_queue_is_shown(
    web: Web, raw: redis.Redis, enqueuer: cogworker.Client
) -> None:
    """A queue SET by hand (the KeyGuard example) beside a real one: Overview, Queues, the
    queue's own pages, a job page and /api/stats answer, with the bad queue named."""
    parked = [enqueuer.enqueue(jobs.Parked, n) for n in range(2)]
    raw.sadd(keys.QUEUES, "broken")
    raw.set(keys.queue("broken"), "not a list")
    flagged = f"{keys.queue('broken')} is not a list"

    overview = web.get("/")
    assert overview.status_code == 200
    assert flagged in overview.text
    queues = web.get("/queues")
    assert queues.status_code == 200
    assert flagged in queues.text
    assert 'href="/queue?name=parked"' in queues.text
    assert flagged in web.get("/queue", params={"name": "broken"}).text
    assert "can't be cleared" in web.get("/queue/clear", params={"name": "broken"}).text
    assert "Enqueued" in web.get("/job", params={"jid": parked[0]}).text

    stats = web.get("/api/stats")
    assert stats.status_code == 200
    assert stats.json()["stats"]["enqueued"] == 2
    assert stats.json()["stats"]["problems"] == [flagged]
    loads = {load["name"]: load for load in stats.json()["queues"]}
    assert loads["broken"] == {"name": "broken", "size": None, "latency": None, "problem": flagged,
                               "paused": False, "processed": 0, "failed": 0}  # fmt: skip
    assert loads["parked"]["size"] == 2


def test_counters_that_are_not_counts_are_flagged_and_left_out(web: Web, raw: redis.Redis) -> None:
    """A queue's total reading "abc" makes the sum unreadable; a day's counter that isn't a
    count is left out of the chart and named; /api/stats gives null for the total, and the
    sum over the queues for the other."""
    today = days_back(time.time(), 7)[-1]
    raw.sadd(keys.PARTS, "default")
    raw.set(keys.stat(parts.MIGRATED, "processed"), "abc")
    raw.set(keys.stat("default", "processed"), 1)
    raw.set(keys.stat(parts.MIGRATED, "failed"), 1)
    raw.set(keys.stat("default", "failed"), 2)
    raw.set(keys.stat("default", "processed", today), "1e3")

    overview = web.get("/")
    assert overview.status_code == 200
    assert "unreadable" in overview.text
    assert "cogworker:{q:}:stat:processed holds b&#39;abc&#39;, not a count" in overview.text
    assert f"the processed counter of {today} is not a count" in overview.text
    stats = web.get("/api/stats").json()["stats"]
    assert (stats["processed"], stats["failed"]) == (None, 3)


def test_a_heartbeat_with_concurrency_nan_flags_its_card(web: Web, raw: redis.Redis) -> None:
    """A process hash with concurrency=nan, and one that isn't a hash: Workers shows both
    cards, each saying what can't be read; Overview still counts them."""
    now = float(raw.time()[0])
    raw.sadd(keys.PROCESSES, "odd-1", "odd-2")
    raw.hset(keys.process("odd-1"), mapping={"concurrency": "nan", "beat": now, "queues": "[]"})
    raw.set(keys.process("odd-2"), "not a hash")

    workers = web.get("/workers")
    assert workers.status_code == 200
    assert "concurrency &#39;nan&#39; is not a count" in workers.text
    assert f"{keys.process('odd-2')} is not a hash" in workers.text
    overview = web.get("/")
    assert overview.status_code == 200
    assert web.get("/api/stats").json()["stats"]["processes"] == 2


def test_a_schedule_that_is_not_a_hash_is_flagged(web: Web, raw: redis.Redis) -> None:
    """A schedule key holding a list: the Periodic page answers and names it; a running lock
    of the wrong type flags its own row only."""
    raw.rpush(keys.PERIODIC_SCHEDULE, schedule_entry("report"))
    page = web.get("/periodic")
    assert page.status_code == 200
    assert f"{keys.PERIODIC_SCHEDULE} is not a hash" in page.text

    raw.delete(keys.PERIODIC_SCHEDULE)
    raw.hset(keys.PERIODIC_SCHEDULE, mapping={n: schedule_entry(n) for n in ("report", "sync")})
    raw.hset(keys.periodic_running("web", "sync"), "jid", "x")
    rows = web.get("/periodic").text
    assert f"{keys.periodic_running('web', 'sync')} is not a string" in rows
    assert rows.count("Enqueue now") == 2


def test_a_sorted_set_of_the_wrong_type_names_the_problem(web: Web, raw: redis.Redis) -> None:
    """Dead held as a string: Overview flags it, and the Dead page says what is wrong instead
    of "something went wrong"."""
    raw.sadd(keys.PARTS, "default")
    raw.set(keys.dead("default"), "not a sorted set")
    assert f"{keys.dead('default')} is not a sorted set" in web.get("/").text
    dead = web.get("/dead")
    assert dead.status_code == 500
    assert "holds another Redis type than cogworker writes" in dead.text
