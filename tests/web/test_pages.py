"""Every page of the dashboard against a Redis seeded by a real worker."""

from __future__ import annotations

import re

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers
from tests.support.processes import wait_until
from tests.web.helpers import Web
from tests.web.scenario import seed


def _stat(html: str, label: str) -> str:
    found = re.search(rf'card-kicker">{label}</span><span class="card-value">([^<]*)<', html)
    assert found is not None, label
    return found.group(1)


def test_overview_counts_what_the_worker_did(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The stat cards, the chart's data and the Redis grid are there."""
    seed(workers, enqueuer, raw)
    page = web.get("/")
    assert page.status_code == 200
    html = page.text
    assert _stat(html, "Dead") == "2"
    assert _stat(html, "Retries") == "1"
    assert _stat(html, "Scheduled") == "1"
    assert _stat(html, "Enqueued") == "2"
    assert _stat(html, "Busy") == "1"
    assert _stat(html, "Processes") == "1"
    assert int(_stat(html, "Processed").replace(",", "")) >= 6
    assert 'id="cw-chart"' in html
    assert "data-chart=" in html
    labels = ("Server version", "Uptime (days)", "Connections", "Memory Usage", "Peak Memory Usage")
    for label in labels:
        assert f">{label}<" in html
    assert ">Primaries<" not in html  # a cluster's card only
    assert ">Litestar<" not in html  # the versions are on About


def test_about_names_the_redis_server_apart_from_redis_py(web: Web, raw: redis.Redis) -> None:
    """About: cogworker and its libraries (redis-py as the client), and the server's version."""
    html = web.get("/about").text
    libraries = ("Python", "redis-py (client)", "attrs", "cattrs", "returns", "click", "Litestar")
    for label in (*libraries, "croniter", "Server version", "Mode"):
        assert f">{label}<" in html
    assert ">License<" in html
    assert ">MIT<" in html
    server = str(raw.info("server")["redis_version"])
    card = rf">Server version</span><span class=\"card-value\">{re.escape(server)}<"
    assert re.search(card, html)
    assert 'href="/about"' in web.get("/").text  # from every page's footer


def test_overview_period_switcher_takes_only_its_periods(web: Web) -> None:
    """Each offered period renders (with that many days); anything else is a 400."""
    for period, days in (("7d", 7), ("30d", 30), ("90d", 90)):
        page = web.get(f"/?period={period}")
        assert page.status_code == 200
        assert f"over the last {days} days" in page.text
    assert web.get("/?period=100000d").status_code == 400
    assert web.get("/?period=7d&period=30d").status_code == 400


def test_workers_page_shows_the_process_and_its_running_job(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A card per process (identity, queues, busy, memory, sparkline) and the running work."""
    seeded = seed(workers, enqueuer, raw)
    html = web.get("/workers").text
    assert seeded.identity in html
    assert "default, web" in html
    assert "1 / 3" in html
    assert 'class="cw-spark"' in html
    assert "Memory, last 24 hours" in html
    assert "Running now (1)" in html
    assert seeded.running in html
    assert "tests.web.jobs.Holds" in html
    assert 'value="quiet"' in html
    assert 'value="stop"' in html


def test_queues_and_queue_pages(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The queues table has sizes, latencies and each queue's own processed and failed runs;
    a queue's page lists its jobs, next first."""
    seeded = seed(workers, enqueuer, raw)
    raw.set(keys.stat("parked", "processed"), 7)
    raw.set(keys.stat("parked", "failed"), 3)
    html = web.get("/queues").text
    assert "/queue?name=parked" in html
    cells = r"parked</a></td>\s*<td class=\"num\">2</td>\s*<td[^>]*>[^<]*</td>\s*"
    assert re.search(cells + r"<td class=\"num\">7</td>\s*<td class=\"num\">3</td>", html)
    queue = web.get("/queue?name=parked").text
    assert queue.index(seeded.parked[0]) < queue.index(seeded.parked[1])  # the oldest runs next
    assert "2 jobs" in queue


def test_sets_list_their_jobs(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Scheduled, Retries and Dead list the jobs that are there, with their errors."""
    seeded = seed(workers, enqueuer, raw)
    assert seeded.scheduled in web.get("/scheduled").text
    retries = web.get("/retries").text
    assert seeded.retrying in retries
    assert "retry me later" in retries
    dead = web.get("/dead").text
    assert seeded.dead in dead
    assert seeded.killed in dead
    assert "JobBoomError" in dead


def test_job_page_says_where_each_job_is(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The tag names the place: Enqueued, Running, Scheduled, Retrying, Dead; else not found."""
    seeded = seed(workers, enqueuer, raw)
    expected = {
        seeded.parked[0]: "Enqueued",
        seeded.running: "Running",
        seeded.scheduled: "Scheduled",
        seeded.retrying: "Retrying",
        seeded.dead: "Dead",
        seeded.done[0]: "Not found",
    }
    for jid, tag in expected.items():
        html = web.get(f"/job?jid={jid}").text
        assert re.search(rf'class="tag [a-z0-9-]+">{tag}<', html), (jid, tag)
        assert f"/history?jid={jid}" in html


def test_retry_timeline_uses_the_spec_labels(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Each attempt outcome reads as the spec writes it, with the error of that attempt."""
    seeded = seed(workers, enqueuer, raw)
    labels = {
        seeded.retrying: "Attempt 1 · failed",
        seeded.dead: "Attempt 1 · moved to dead set",
        seeded.killed: "Attempt 1 · killed by retry_in, moved to dead set",
        seeded.discarded: "Attempt 1 · discarded by retry_in",
    }
    for jid, label in labels.items():
        html = web.get(f"/job?jid={jid}").text
        assert label in html, (jid, label)
        assert "JobBoomError" in html
    dead = web.get(f"/job?jid={seeded.dead}").text
    assert "Traceback" in dead
    assert "not allowed yet" in dead


def test_history_periodic_api_and_health(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The History and Periodic pages render; the JSON stats and the health check answer."""
    seeded = seed(workers, enqueuer, raw)
    assert web.get(f"/history?jid={seeded.dead}").status_code == 200
    assert "No periodic jobs configured" in web.get("/periodic").text
    stats = web.get("/api/stats").json()
    assert stats["stats"]["dead"] == 2
    assert stats["stats"]["processes"] == 1
    assert {
        k: v
        for k, v in next(q for q in stats["queues"] if q["name"] == "parked").items()
        if k != "latency"
    } == {
        "name": "parked",
        "size": 2,
        "paused": False,
        "processed": 0,
        "failed": 0,
        "problem": None,
    }
    assert web.get("/health").json() == {"status": "ok"}


def test_a_poll_gets_the_live_part_only(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """An htmx request gets the fragment, without the page around it, and it stays current."""
    seeded = seed(workers, enqueuer, raw)
    fragment = web.get("/workers", headers={"HX-Request": "true"}).text
    assert "<html" not in fragment
    assert seeded.running in fragment
    raw.lpush("release", "1")
    wait_until(
        lambda: "Running now (0)" in web.get("/workers", headers={"HX-Request": "true"}).text
    )


def test_pages_link_under_the_live_region_with_htmx(web: Web) -> None:
    """Each page with live data has one polled region that fetches the page itself; a job
    searched for and not found has none (a poll would search again)."""
    for path in ("/", "/workers", "/queues", "/dead", "/job?jid=x&in=running"):
        html = web.get(path).text
        assert html.count('id="cw-live"') == 1, path
        assert 'hx-trigger="cw-poll"' in html
    assert 'id="cw-live"' not in web.get("/job?jid=x").text
