"""Per-class metrics keys holding another Redis type than cogworker writes (a total SET by
hand, a queue's registry of classes made a string): `/metrics` on both ports and the
Metrics page leave them out, count them and log each once; the rest stands."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web.metrics_port import MetricsOnly
from cogworker.domain.class_metrics import hour_of
from tests.support.topology_marks import on_both_topologies
from tests.web.class_runs import settle_runs
from tests.web.helpers import Web
from tests.web.test_metrics_endpoint import _get, scraped

#: The reads merge per-queue parts: on a cluster, each queue's keys on its own primary.
pytestmark = on_both_topologies


class Lines(logging.Handler):
    """The messages logged to the dashboard's logger while it is attached."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def dashboard_log() -> Iterator[Lines]:
    """What the dashboard's logger logs during the test."""
    lines = Lines()
    logger = logging.getLogger("cogworker.dashboard")
    logger.addHandler(lines)
    yield lines
    logger.removeHandler(lines)


def _break(raw: redis.Redis) -> tuple[str, str]:
    """A class with a good total and one whose total is a string on `default`, and a queue
    whose registry of classes is a string; the bad total's and the registry's keys (named
    afresh, as the process logs a key once)."""
    now = float(raw.time()[0])
    bad = f"app.Bad{uuid.uuid4().hex}"
    settle_runs(raw, "app.Good", [2_000] * 3, now)
    raw.zadd(keys.metrics_classes("default"), {bad: now})
    raw.set(keys.metrics_total("default", bad), "x")
    broken_queue = f"q{uuid.uuid4().hex}"
    raw.sadd(keys.PARTS, broken_queue)
    raw.set(keys.metrics_classes(broken_queue), "x")
    return keys.metrics_total("default", bad), keys.metrics_classes(broken_queue)


def test_a_wrong_typed_metrics_key_leaves_both_scrapes_standing(
    web: Web, raw: redis.Redis, config: cogworker.Config, dashboard_log: Lines
) -> None:
    """The dashboard's /metrics and the metrics port answer 200 with the good class's
    series and `cogworker_unreadable_keys` 2; two scrapes on each log each key once."""
    total, registry = _break(raw)
    store = DashboardStore.on(raw, config.retention)
    answers = [web.get("/metrics") for _ in range(2)]
    ported = [
        asyncio.run(_get(MetricsOnly(store, config.metrics_max_classes), "/metrics"))
        for _ in range(2)
    ]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert [status for status, _body in ported] == [200, 200]
    for text in (answers[-1].text, ported[-1][1].decode()):
        samples = scraped(text)
        assert samples[("cogworker_job_runs_total", (("class", "app.Good"),))] == 3
        assert samples[("cogworker_unreadable_keys", ())] == 2
    logged = [message for message in dashboard_log.messages if total in message]
    assert logged == [f"metrics: a key left out of the scrape: {total} is not a hash"]
    assert sum(registry in message for message in dashboard_log.messages) == 1


def test_the_metrics_page_names_a_wrong_typed_key_and_shows_the_rest(
    web: Web, raw: redis.Redis
) -> None:
    """The Metrics page answers 200, lists the good class and names both bad keys (its
    current hour's, which the page reads, made a string too)."""
    total, registry = _break(raw)
    hour = total.removesuffix(":total") + f":h:{hour_of(float(raw.time()[0]))}"
    raw.set(hour, "x")
    page = web.get("/job-metrics")
    assert page.status_code == 200
    assert "app.Good" in page.text
    assert f"{hour} is not a hash" in page.text
    assert f"{registry} is not a sorted set" in page.text
