"""Overview as an operator watches it: live throughput per poll, runs per day as bars, the
queues with size and latency; chart text readable in dark mode."""

from __future__ import annotations

import re

import redis
from playwright.sync_api import Page, expect

import cogworker
from tests.app.helpers import Workers, wait_for_processes
from tests.support.processes import wait_until
from tests.web import jobs
from tests.web.browser import Tab
from tests.web.scenario import WEB_APP

_SUMS = """() => Chart.getChart(document.getElementById('cw-throughput')).data.datasets
    .map((set) => set.data.reduce((a, b) => a + b, 0))"""

_LABELS = "() => Chart.getChart(document.getElementById('cw-throughput')).data.labels"
_COLOURS = """(id) => { const o = Chart.getChart(document.getElementById(id)).options;
    return [o.scales.x.ticks.color, o.scales.y.ticks.color, o.plugins.legend.labels.color]; }"""


def _sums(page: Page) -> list[int]:
    sums: list[int] = page.evaluate(_SUMS)
    return sums


def test_live_throughput_counts_each_poll_s_processed_and_failed_jobs(
    tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """5 jobs that succeed and 2 that fail, worked while the page polls every 2 s: the
    throughput points add up to 7 processed and 2 failed."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    page = tab.go("/")
    page.select_option("#cw-poll-interval", "2")
    page.wait_for_function("() => !!Chart.getChart(document.getElementById('cw-throughput'))")
    for n in range(5):
        enqueuer.enqueue(jobs.Done, n)
    for n in range(2):
        enqueuer.enqueue(jobs.FailsUntilAllowed, n)
    wait_until(lambda: raw.zcard("cogworker:{q:web}:dead") == 2 and raw.scard("done") == 5)
    wait_until(lambda: _sums(page) == [7, 2], 20.0, interval=0.5, message=lambda: str(_sums(page)))
    labels = page.evaluate(_LABELS)
    assert len(labels) == len(set(labels)), labels  # a point per poll, 2 s apart
    tab.shot("overview-throughput")


def test_runs_per_day_are_bars_and_queues_show_size_and_latency(
    tab: Tab, enqueuer: cogworker.Client
) -> None:
    """The daily chart draws bars; Overview lists each queue with its size and latency."""
    for n in range(3):
        enqueuer.enqueue(jobs.Parked, n)
    page = tab.go("/")
    page.wait_for_function("() => !!Chart.getChart(document.getElementById('cw-chart'))")
    assert (
        page.evaluate("() => Chart.getChart(document.getElementById('cw-chart')).config.type")
        == "bar"
    )
    row = page.locator("#cw-overview-queues tbody tr", has_text="parked")
    expect(row.locator("td").nth(1)).to_have_text("3")
    expect(row.locator("td").nth(2)).to_have_text(re.compile(r"^\d+(\.\d)? (s|min)$"))


def test_chart_text_is_readable_in_dark_mode(dark_tab: Tab) -> None:
    """In dark mode the axes' ticks and the legend take the page's light muted colour."""
    page = dark_tab.go("/")
    page.wait_for_function("() => !!Chart.getChart(document.getElementById('cw-chart'))")
    for canvas in ("cw-chart", "cw-throughput"):
        colours = page.evaluate(_COLOURS, canvas)
        assert colours == ["#9aa4b2"] * 3, (canvas, colours)
    dark_tab.shot("overview-dark")
