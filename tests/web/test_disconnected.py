"""Redis going away while the dashboard is open: polls flag it, the 503 page names what failed
and comes back by itself, and a frozen Redis answers in the dashboard's short timeout."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient
from playwright.sync_api import Browser, expect

import cogworker
from cogworker.app.web import create_app
from cogworker.app.web.app import READ_TIMEOUT
from tests.support.redis_server import RedisServer
from tests.web.browser import Tab
from tests.web.helpers import Web, serving

#: What a tab logs while Redis is away (the failed polls and health checks): expected here.
AWAY = ("503 ", "Failed to load resource", "htmx:responseError", "htmx:sendError")


@pytest.fixture
def away_tab(browser: Browser, fresh_redis_server: RedisServer, tmp_path: Path) -> Iterator[Tab]:
    """A tab on `cogworker serve` over a Redis the test stops and starts."""
    with serving(tmp_path, "--redis-url", fresh_redis_server.url) as base:
        tab = Tab.open(browser, base)
        yield tab
        tab.close()
    unexpected = [error for error in tab.errors if not any(mark in error for mark in AWAY)]
    assert unexpected == []


def test_the_badge_shows_while_redis_is_down_and_clears_when_it_returns(
    away_tab: Tab, fresh_redis_server: RedisServer
) -> None:
    """Polling every 2 s: Redis stops, the header says disconnected since the last update;
    Redis is back, the badge goes."""
    page = away_tab.go("/workers")
    page.select_option("#cw-poll-interval", "2")
    badge = page.locator("#cw-connection")
    expect(badge).to_be_hidden()
    fresh_redis_server.stop()
    expect(badge).to_be_visible(timeout=15_000)
    expect(badge).to_have_text(re.compile(r"^disconnected, last update \d\d:\d\d:\d\d$"))
    assert "Redis is not answering" in (badge.get_attribute("title") or "")
    away_tab.shot("disconnected")
    fresh_redis_server.start()
    expect(badge).to_be_hidden(timeout=15_000)


def test_the_503_page_names_the_failure_and_reloads_once_redis_is_back(
    away_tab: Tab, fresh_redis_server: RedisServer
) -> None:
    """Opened while Redis is down: a 503 saying what failed, which turns into the page itself
    once /health is green, without a click."""
    fresh_redis_server.stop()
    page = away_tab.page
    response = page.goto(away_tab.base + "/queues")
    assert response is not None
    assert response.status == 503
    expect(page.locator(".cw-panel")).to_contain_text("Can't reach Redis at redis://127.0.0.1:")
    expect(page.locator("#cw-retry")).to_be_visible()
    away_tab.shot("redis-unavailable")
    fresh_redis_server.start()
    expect(page.locator("h1")).to_have_text("Queues", timeout=15_000)


def test_a_frozen_redis_gets_a_503_within_the_dashboard_s_timeout(
    fresh_redis_server: RedisServer,
) -> None:
    """The dashboard's connections wait READ_TIMEOUT, under the workers' 5 s, and the page
    says Redis didn't answer in that time; POSTs get no self-reloading page."""
    config = cogworker.Config(redis_url=fresh_redis_server.url)
    app = create_app(config)
    store = app.litestar.state["cogworker_dashboard"].store
    kwargs = store.processes.client.connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == READ_TIMEOUT < 5
    with TestClient(app) as client:
        token = Web(client).token()
        fresh_redis_server.pause()
        try:
            frozen = client.get("/workers")
            posted = client.post("/cancel", data={"jid": "somejid", "_csrf_token": token})
        finally:
            fresh_redis_server.resume()
    assert frozen.status_code == 503
    assert f"did not answer within {READ_TIMEOUT:g} s" in frozen.text
    assert 'id="cw-retry"' in frozen.text
    assert posted.status_code == 503
    assert 'id="cw-retry"' not in posted.text
