"""1,000 periodic jobs written straight into a real Redis: the Periodic page lists 50 a
page, and what a page costs Redis and sends doesn't grow with the schedule."""

from __future__ import annotations

import re

import redis

from cogworker.adapters import redis_keys as keys
from tests.web.helpers import Web, schedule_entry
from tests.web.test_metrics_scale import command_cost


def test_the_periodic_page_of_1_000_entries_is_paged_and_bounded(
    web: Web, raw: redis.Redis
) -> None:
    """1,000 periodic jobs: 50 a page, by name; a page reads the schedule, then only its own
    entries' running locks; a page past the last says so."""
    names = [f"job{number:04d}" for number in range(1_000)]
    raw.hset(keys.PERIODIC_SCHEDULE, mapping={name: schedule_entry(name) for name in names})
    commands, first = command_cost(raw, lambda: web.get("/periodic"))
    # The schedule's HGETALL, a GET per entry shown, Redis's clock, and the page's own reads.
    assert commands <= 2 + 50 + 5
    assert len(first.encode()) < 150_000
    assert "Periodic jobs 1–50 of 1,000, by name." in first
    assert "job0049" in first
    assert "job0050" not in first
    assert 'href="/periodic?page=2">Next →' in first
    last = web.get("/periodic", params={"page": "20"}).text
    assert {"job0950", "job0999"} <= set(re.findall(r"job\d{4}", last))
    assert "job0949" not in last
    assert "Next →" not in last
    past = web.get("/periodic", params={"page": "21"}).text
    assert "Page 21 is past the last of 1,000 periodic jobs" in past
    assert "No periodic jobs configured" not in past
