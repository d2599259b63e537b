"""Density and phones: one line per table row, a long cell opened by a click, absolute UTC
beside relative times; on a phone's 390 px screen no page is wider than the screen, with long
values in every column (each page, and each job page, saved as a screenshot)."""

from __future__ import annotations

import json
import re

import redis
from playwright.sync_api import expect

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers
from tests.support.sets import add_to_set
from tests.web import jobs
from tests.web.browser import PHONE, Tab
from tests.web.class_runs import settle_runs
from tests.web.helpers import schedule_entry
from tests.web.scenario import PAGES, seed

_WIDTH = "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"


def test_no_page_is_wider_than_a_phone(
    phone_tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Every page at 390 px, a worker's data plus long names and arguments: the page scrolls
    down, never sideways (wide tables scroll inside their own box)."""
    seeded = seed(workers, enqueuer, raw)
    long_word = "x" * 300
    enqueuer.enqueue_in(3600, jobs.Done, long_word, {"k" * 80: "v" * 2_000})
    raw.hset(keys.PERIODIC_SCHEDULE, "nightly-report", schedule_entry("nightly-report"))
    raw.sadd("cogworker:queues", "q" * 200)
    long_class = "app." + "C" * 300
    settle_runs(raw, long_class, [2_000, 40_000], float(raw.time()[0]), failed=1)
    pages = {
        **PAGES,
        "job-dead": f"/job?jid={seeded.dead}",
        "job-running": f"/job?jid={seeded.running}",
        "history": f"/history?jid={seeded.dead}",
        "job-metrics-class": f"/job-metrics/class?name={jobs.Done.__module__}.Done",
        "job-metrics-long": f"/job-metrics/class?name={long_class}",
    }
    wide = {}
    for name, path in pages.items():
        page = phone_tab.go(path)
        expect(page.locator("h1")).to_be_visible()
        width = page.evaluate(_WIDTH)
        if width > PHONE["width"]:
            wide[name] = width
        phone_tab.shot(f"phone-{name}")
    assert wide == {}


#: The nav's links a person can't see or tap where they are: outside the screen, or clipped
#: (the point at a link's middle shows something else).
_OUT_OF_REACH = """() => [...document.querySelectorAll(".cw-nav a")].filter((link) => {
  const box = link.getBoundingClientRect();
  const [x, y] = [box.left + box.width / 2, box.top + box.height / 2];
  return box.left < 0 || box.right > innerWidth || document.elementFromPoint(x, y) !== link;
}).map((link) => link.textContent.trim())"""


def test_every_page_is_reachable_from_the_header_on_a_phone(
    phone_tab: Tab, raw: redis.Redis
) -> None:
    """At 390 px every page's link in the header is on the screen and tappable (none behind
    a strip that scrolls sideways), the header covers none of the page, and each link
    opens its page."""
    add_to_set(raw, "cogworker:{q:q}:dead", {json.dumps({"jid": "j1", "class": "app.A",
               "queue": "q", "args": [], "retry": 0, "created_at": 1.7e9}): 1.7e9})  # fmt: skip
    page = phone_tab.go("/")
    labels = page.locator(".cw-nav a").all_inner_texts()
    assert len(labels) == 10
    for label in labels:
        assert page.evaluate(_OUT_OF_REACH) == [], label
        page.locator(".cw-nav").get_by_role("link", name=label, exact=True).tap()
        expect(page.locator("h1")).to_be_visible()
        header = page.locator(".cw-header").bounding_box()
        heading = page.locator("h1").bounding_box()
        assert header is not None
        assert heading is not None
        assert heading["y"] >= header["y"] + header["height"], label
        assert page.evaluate(_WIDTH) <= PHONE["width"], label


def test_rows_are_one_line_and_a_long_cell_opens_on_click(tab: Tab, raw: redis.Redis) -> None:
    """A 2,000-character error stays on its row's one line (its start, the rest as a
    tooltip); a click opens it in full, another closes it; times show UTC too."""
    entry = {"jid": "longerror01", "class": "app.Sync", "queue": "q", "args": ["a " * 500],
             "retry": 0, "created_at": 1.7e9, "retry_count": 1, "error_class": "Boom",
             "error_message": "word " * 400}  # fmt: skip
    add_to_set(raw, "cogworker:{q:q}:dead", {json.dumps(entry): 1.7e9})
    page = tab.go("/dead")
    cell = page.locator("td.error.cw-clip")
    row_height = page.locator("tbody tr").first.bounding_box()
    assert row_height is not None
    assert row_height["height"] < 50
    assert (cell.get_attribute("title") or "").startswith("Boom: word word")
    expect(page.locator("tbody .cw-abs")).to_have_text("2023-11-14 22:13:20 UTC")
    closed = cell.bounding_box()
    cell.click()
    expect(cell).to_have_class(re.compile(r"\bcw-open\b"))
    opened = cell.bounding_box()
    assert closed is not None
    assert opened is not None
    assert opened["height"] > 3 * closed["height"]
    tab.shot("dead-cell-open")
    cell.click()
    expect(cell).not_to_have_class(re.compile(r"\bcw-open\b"))
