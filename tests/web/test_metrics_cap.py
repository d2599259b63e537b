"""10,000 job classes with metrics, written straight into a real Redis: `/metrics` exports
the `metrics_max_classes` (200) that ran last and counts the rest, the Metrics page shows a
page at a time, and what each costs Redis and sends stays bounded whatever the number of
classes."""

from __future__ import annotations

import re

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.domain.class_cap import DEFAULT_LIMIT
from cogworker.domain.class_metrics import hour_of
from tests.web.helpers import Web
from tests.web.test_metrics_endpoint import scraped
from tests.web.test_metrics_scale import command_cost

QUEUES, MANY, FEW = 100, 10_000, 300
_ROWS = re.compile(r"<tbody>(.*?)</tbody>", re.S)


def _seed_classes(raw: redis.Redis, classes: int) -> float:
    """`classes` classes spread over `QUEUES` queues, each with a total and an hour of
    runs now; class N ran N seconds after the first, so the last ones ran last.  Redis's
    clock, now."""
    now = float(raw.time()[0])
    pipe = raw.pipeline(transaction=False)
    for number in range(classes):
        queue, name = f"queue{number % QUEUES:03d}", f"app.jobs.Job{number:05d}"
        figures = {"f": 1, "t": 6_000 * (number + 1), "5": 3}
        pipe.sadd(keys.PARTS, queue)
        pipe.zadd(keys.metrics_classes(queue), {name: now - classes + number})
        pipe.hset(keys.metrics_total(queue, name), mapping=figures)
        pipe.hset(keys.metrics_hour(queue, name, hour_of(now)), mapping=figures)
    pipe.execute()
    return now


def test_a_scrape_of_10_000_classes_costs_what_one_of_300_does(
    web: Web, raw: redis.Redis, config: cogworker.Config
) -> None:
    """300 classes, then 10,000: the same commands and lines, the 200 that ran last
    exported and the others counted in `cogworker_job_classes_left_out`."""
    assert config.metrics_max_classes == DEFAULT_LIMIT == 200
    _seed_classes(raw, FEW)
    few_commands, few_text = command_cost(raw, lambda: web.get("/metrics"))
    raw.flushdb()
    _seed_classes(raw, MANY)
    many_commands, many_text = command_cost(raw, lambda: web.get("/metrics"))
    samples = scraped(many_text)
    exported = {dict(labels)["class"] for name, labels in samples
                if name == "cogworker_job_runs_total"}  # fmt: skip
    assert exported == {f"app.jobs.Job{number:05d}" for number in range(MANY - 200, MANY)}
    assert samples[("cogworker_job_classes_left_out", ())] == MANY - 200
    assert scraped(few_text)[("cogworker_job_classes_left_out", ())] == FEW - 200
    assert many_commands == few_commands
    assert len(many_text.splitlines()) == len(few_text.splitlines())
    assert len(many_text.encode()) < 400_000


def test_the_metrics_page_of_10_000_classes_is_paged_and_bounded(
    web: Web, raw: redis.Redis
) -> None:
    """50 rows a page, the classes that ran last read: at most one hour's and 59 minutes'
    hashes per class read, and a page's size doesn't grow with the classes."""
    _seed_classes(raw, MANY)
    commands, first = command_cost(raw, lambda: web.get("/job-metrics", params={"sort": "runs"}))
    # The parts, each queue's registry, Redis's clock, then the covered classes' hashes.
    assert commands <= 2 + QUEUES + 200 * (1 + 59)
    assert len(first.encode()) < 150_000
    assert _ROWS.search(first).group(1).count("<tr>") == 50  # type: ignore[union-attr]
    assert "Classes 1–50 of 200." in first
    assert "Of 10,000 job classes with metrics, the 200 that ran last are read" in first
    assert 'href="/job-metrics?period=1h&amp;sort=runs&amp;page=2">Next →' in first
    last = web.get("/job-metrics", params={"sort": "runs", "page": "4"}).text
    assert "Classes 151–200 of 200." in last
    assert "Next →" not in last
    assert "← Previous" in last
    past = web.get("/job-metrics", params={"page": "5"}).text
    assert "Page 5 is past the last of 200 classes" in past
