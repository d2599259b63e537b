"""The Metrics page over per-class metrics written by the settling scripts: the table's
figures, its orders and periods, a class's charts, and what it says when nothing ran."""

from __future__ import annotations

import html
import json
import re

import pytest
import redis

from tests.web.class_runs import settle_runs
from tests.web.helpers import Web

HOUR = 3600.0
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
_TAG = re.compile(r"<[^>]+>")
_CHART = re.compile(r"<canvas id=\"cw-class-(\w+)\"[^>]*data-chart='([^']*)'")


def _table(page: str) -> list[list[str]]:
    """The table body's rows, each the text of its cells."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [html.unescape(_TAG.sub("", cell)).strip() for cell in _CELL.findall(row)]
        for row in _ROW.findall(body)
    ]


def _classes(web: Web, **query: str) -> list[str]:
    return [row[0] for row in _table(web.get("/job-metrics", params=query).text)]


def _seed(raw: redis.Redis) -> float:
    """app.Fast: 10 runs of 2 ms now, 2 failing; app.Slow: one 3 s run now and three 5 h ago;
    app.Old: one 20 ms run 30 h ago.  Redis's clock, now."""
    now = float(raw.time()[0])
    settle_runs(raw, "app.Old", [20_000], now - 30 * HOUR)
    settle_runs(raw, "app.Slow", [3_000_000] * 3, now - 5 * HOUR, queue="reports")
    settle_runs(raw, "app.Slow", [3_000_000], now, queue="reports")
    settle_runs(raw, "app.Fast", [2_000] * 10, now, failed=2)
    return now


def test_the_table_shows_each_class_over_the_period(web: Web, raw: redis.Redis) -> None:
    """Runs, failures, total time and the quantiles estimated from the buckets, per class."""
    _seed(raw)
    rows = {row[0]: row[1:] for row in _table(web.get("/job-metrics").text)}
    assert rows == {
        # 2 ms runs count in the (1.5 ms, 2.5 ms] bucket: quantiles interpolate within it.
        "app.Fast": ["10", "2", "20 ms", "2 ms", "2.45 ms", "2.49 ms", "Last runs"],
        "app.Slow": ["1", "0", "3 s", "3.25 s", "3.92 s", "3.98 s", "Last runs"],
    }
    over_8h = {row[0]: row[1:4] for row in _table(web.get("/job-metrics?period=8h").text)}
    assert over_8h == {"app.Fast": ["10", "2", "20 ms"], "app.Slow": ["4", "0", "12 s"]}
    assert _classes(web, period="24h") == ["app.Slow", "app.Fast"]
    assert _classes(web, period="72h") == ["app.Slow", "app.Fast", "app.Old"]


def test_the_table_sorts_by_each_column(web: Web, raw: redis.Redis) -> None:
    """Largest first for every column; the links keep the period, the sort keeps it too."""
    _seed(raw)
    expected = {
        "time": ["app.Slow", "app.Fast", "app.Old"],
        "runs": ["app.Fast", "app.Slow", "app.Old"],
        "failures": ["app.Fast", "app.Old", "app.Slow"],  # ties by name
        "p50": ["app.Slow", "app.Old", "app.Fast"],
        "p95": ["app.Slow", "app.Old", "app.Fast"],
        "p99": ["app.Slow", "app.Old", "app.Fast"],
    }
    for sort, order in expected.items():
        assert _classes(web, period="72h", sort=sort) == order, sort
    page = web.get("/job-metrics", params={"period": "72h", "sort": "runs"}).text
    assert 'aria-sort="descending"><a href="/job-metrics?period=72h&amp;sort=runs"' in page
    assert 'href="/job-metrics?sort=runs&amp;period=8h"' in page  # the period links keep it


def test_1h_is_the_last_60_minutes_not_the_current_clock_hour(web: Web, raw: redis.Redis) -> None:
    """14 runs 58 minutes ago count in "1h" (they are in the clock hour before unless it
    is past :58), 3 runs 62 minutes ago don't; the class view and "8h" agree."""
    now = float(raw.time()[0])
    settle_runs(raw, "app.Recent", [2_000] * 14, now - 58 * 60)
    settle_runs(raw, "app.Recent", [2_000] * 3, now - 62 * 60)
    assert {row[0]: row[1] for row in _table(web.get("/job-metrics").text)} == {"app.Recent": "14"}
    view = web.get("/job-metrics/class", params={"name": "app.Recent"}).text
    assert _cards(view)["Runs"] == "14"
    timeline = json.loads(html.unescape(dict(_CHART.findall(view))["timeline"]))
    assert sum(timeline["datasets"][0]["data"]) == 14
    assert _table(web.get("/job-metrics?period=8h").text)[0][1] == "17"


def test_sub_millisecond_quantiles_say_under_a_millisecond(web: Web, raw: redis.Redis) -> None:
    """Runs of 4 µs: the table's and the class view's quantiles read "< 1 ms", not the
    0.5 ms an interpolation within the first bucket would make up; the total stays exact."""
    settle_runs(raw, "app.Tiny", [4] * 10, float(raw.time()[0]))
    (row,) = _table(web.get("/job-metrics").text)
    assert row[1:7] == ["10", "0", "0.04 ms", "< 1 ms", "< 1 ms", "< 1 ms"]
    cards = _cards(web.get("/job-metrics/class", params={"name": "app.Tiny"}).text)
    shown = tuple(html.unescape(cards[key]) for key in ("p50", "p95", "p99"))
    assert shown == ("< 1 ms", "< 1 ms", "< 1 ms")


def test_a_class_view_charts_its_runs_and_run_times(web: Web, raw: redis.Redis) -> None:
    """The time chart adds up to the class's runs and failures, the histogram to its runs;
    the table links each class to it."""
    _seed(raw)
    table = web.get("/job-metrics").text
    assert 'href="/job-metrics/class?name=app.Fast&amp;period=1h"' in table
    assert 'href="/job-metrics/class?name=app.Fast&amp;period=1h#runs"' in table
    page = web.get("/job-metrics/class", params={"name": "app.Slow", "period": "8h"}).text
    charts = {name: json.loads(html.unescape(spec)) for name, spec in _CHART.findall(page)}
    timeline, histogram = charts["timeline"], charts["histogram"]
    assert (timeline["type"], len(timeline["labels"])) == ("line", 8 * 60 // 5)
    runs, failures = (dataset["data"] for dataset in timeline["datasets"])
    assert (sum(runs), sum(failures)) == (4, 0)
    assert histogram["labels"] == ["≤ 4 s"]
    assert histogram["datasets"][0]["data"] == [4]
    assert "Metrics of app.Slow" in page
    fast = web.get("/job-metrics/class", params={"name": "app.Fast"}).text
    assert 'Failures</span><span class="card-value">2<' in fast


def test_a_class_view_lists_its_last_runs_on_every_queue_newest_first(
    web: Web, raw: redis.Redis
) -> None:
    """Runs of one class on three queues (each queue's history in its own slot), ended at
    different times: the Last runs table merges them, newest first, each with its queue."""
    now = float(raw.time()[0])
    settle_runs(raw, "app.Mixed", [1_000], now - 120, queue="mail")
    settle_runs(raw, "app.Mixed", [2_000], now, queue="reports")
    settle_runs(raw, "app.Mixed", [3_000], now - 30, failed=1, queue="reports")
    settle_runs(raw, "app.Mixed", [4_000], now - 60)
    page = web.get("/job-metrics/class", params={"name": "app.Mixed"}).text
    runs = _table(page.split('id="runs"', 1)[1])
    assert [(row[1], row[2], row[4]) for row in runs] == [
        ("2 ms", "success", "reports"),
        ("3 ms", "retrying", "reports"),
        ("4 ms", "success", "default"),
        ("1 ms", "success", "mail"),
    ]


def test_every_listed_class_opens_whatever_its_name(web: Web, raw: redis.Redis) -> None:
    """Class names a link can't carry as they are (a tab, 600 characters, a space at an end,
    a leading #) travel as a digest: each row's link opens that class's view."""
    odd = ["tab\there", "C" * 600, " padded", "#looks-like-a-digest"]
    now = float(raw.time()[0])
    for runs, name in enumerate(odd, start=1):
        settle_runs(raw, name, [1_000] * runs, now)
    table = web.get("/job-metrics").text
    hrefs = [
        html.unescape(href) for href in re.findall(r'href="(/job-metrics/class\?[^"#]*)"', table)
    ]
    opened = {}
    for href in hrefs:
        page = web.get(href).text
        opened[_cards(page)["Runs"]] = page
    assert sorted(opened) == ["1", "2", "3", "4"]
    assert (
        web.get("/job-metrics/class", params={"name": "#0123456789abcdef0123"}).status_code == 404
    )


def _cards(page: str) -> dict[str, str]:
    """A class view's cards: label -> value."""
    found = re.findall(r'card-kicker">([^<]*)</span><span class="card-value">([^<]*)<', page)
    return dict(found)


def test_nothing_ran_says_what_to_do(web: Web, raw: redis.Redis) -> None:
    """Without metrics the table says how they are recorded; an unknown class says so too."""
    empty = web.get("/job-metrics")
    assert empty.status_code == 200
    assert "No job ran in the last 1h." in empty.text
    assert "cogworker work APP" in empty.text
    unknown = web.get("/job-metrics/class", params={"name": "app.Nope"}).text
    assert "No run of this class in the last 1h" in unknown
    assert "<canvas" not in unknown
    assert web.client.head("/job-metrics").status_code == 200
    assert web.client.head("/job-metrics/class?name=app.Nope").status_code == 200


@pytest.mark.parametrize(
    "query", ["/job-metrics?period=2h", "/job-metrics?sort=name", "/job-metrics/class?name=%00"]
)
def test_bad_parameters_are_a_400(web: Web, query: str) -> None:
    """The period and the sort are allow-listed; a class name is checked text."""
    response = web.get(query)
    assert response.status_code == 400
    assert "query parameter" in response.text
