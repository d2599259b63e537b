"""The Limits page: each per-key limit's key used lately with its holders, its use against
its max and the jobs waiting for a place; over HTTP, and in a browser against a real
worker whose job holds a key's only place."""

from __future__ import annotations

import time

import redis
from playwright.sync_api import expect

import cogworker
from cogworker.adapters.limit_store import LimitStore, spot_of
from cogworker.domain.key_limits import Concurrency, Rate, claim_for
from tests.app.helpers import Workers, wait_for_processes
from tests.app.limit_jobs import HoldsOne, SharesOne
from tests.support.processes import wait_until
from tests.web.browser import Tab
from tests.web.helpers import Web
from tests.web.scenario import WEB_APP


def _take(raw: redis.Redis, limit: Concurrency | Rate, key: str, *jids: str) -> None:
    store = LimitStore(raw)
    spot = spot_of("default", claim_for(limit, "app.Fetch", key), limit)
    for jid in jids:
        store.take(spot, jid, 60, time.time())


def test_no_limit_used_says_how_to_give_one(web: Web) -> None:
    """An empty Redis: the page says what a limit is and how a class gets one."""
    page = web.get("/limits")
    assert page.status_code == 200
    assert "No per-key limit was used lately" in page.text
    assert "cogworker.Concurrency(max=5" in page.text


def test_each_key_shows_its_use_holders_and_waiting_jobs(web: Web, raw: redis.Redis) -> None:
    """A concurrency key full with one job refused, and a rate key: both listed with their
    numbers; the jids link to their job pages; the live part answers a poll alone."""
    _take(raw, Concurrency(max=1), "acme", "holder-1", "waiter-1")
    _take(raw, Rate(max=5, per=60), "", "started-1", "started-2")
    page = web.get("/limits").text
    assert "acme" in page
    assert "1 / 1" in page
    assert "2 / 5" in page
    assert "per 60 s" in page
    assert "(one key)" in page
    assert "/job?jid=holder-1" in page
    assert "/job?jid=waiter-1" in page
    fragment = web.get("/limits", headers={"HX-Request": "true"}).text
    assert "<html" not in fragment
    assert "/job?jid=holder-1" in fragment


def test_a_key_is_shown_as_text_never_as_markup(web: Web, raw: redis.Redis) -> None:
    """A key a job's arguments made can hold anything: it is escaped."""
    _take(raw, Concurrency(max=2), "<script>alert(1)</script>", "a")
    page = web.get("/limits").text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_browser_sees_a_full_key_and_its_waiting_job_then_the_place_move_on(
    tab: Tab, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A real worker runs a job holding its key's only place and refuses another: the page
    shows 1 / 1, the holder and one waiting job; released, the poll shows the key free."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    holder = str(enqueuer.enqueue(HoldsOne, "tenant-7"))
    wait_until(lambda: raw.sismember("holding", holder), message=worker.log_tail)
    waiter = str(enqueuer.enqueue(SharesOne, "tenant-7"))
    wait_until(lambda: LimitStore(raw).uses()[0].waiting == 1, message=worker.log_tail)

    page = tab.go("/limits")
    row = page.get_by_role("row").filter(has_text="tenant-7")
    expect(row.locator(".cw-use")).to_contain_text("1 / 1")
    expect(row.get_by_role("link", name=holder)).to_be_visible()
    expect(row.locator(".cw-waiting")).to_contain_text("1")
    expect(row.get_by_role("link", name=waiter)).to_be_visible()
    tab.shot("limits")

    page.select_option("#cw-poll-interval", "2")
    raw.set("release", 1)
    wait_until(lambda: int(raw.get(f"runs:{waiter}") or 0) == 1, message=worker.log_tail)
    expect(row.locator(".cw-use")).to_contain_text("0 / 1", timeout=10_000)
    expect(row.locator(".cw-waiting")).to_have_text("0", timeout=10_000)
