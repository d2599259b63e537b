"""Fixtures of the dashboard tests: the app on the test's Redis, a client with its CSRF token,
and worker processes whose jobs record into the same Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from litestar.testing import TestClient
from playwright.sync_api import Browser

import cogworker
from cogworker.app.web import DashboardApp, create_app
from tests.app.helpers import Workers
from tests.support.processes import CogworkerFactory
from tests.support.redis_server import RedisServer
from tests.web.browser import Tab, chromium
from tests.web.helpers import Web, serving


@pytest.fixture
def config(redis_url: str) -> cogworker.Config:
    """The dashboard's config: the test's Redis."""
    return cogworker.Config(redis_url=redis_url, heartbeat_interval=0.2)


@pytest.fixture
def app(config: cogworker.Config) -> DashboardApp:
    """The dashboard on the test's Redis."""
    return create_app(config)


@pytest.fixture
def web(app: DashboardApp) -> Iterator[Web]:
    """A test client of the dashboard that knows its CSRF token."""
    with TestClient(app) as client:
        yield Web(client)


@pytest.fixture
def workers(cogworker_factory: CogworkerFactory, redis_url: str) -> Workers:
    """Starts `cogworker work` processes on the test's Redis, with the side-effect URL set."""
    return Workers(cogworker_factory, redis_url)


@pytest.fixture
def enqueuer(redis_url: str) -> Iterator[cogworker.Client]:
    """A cogworker Client on the test's Redis."""
    client = cogworker.Client(cogworker.Config(redis_url=redis_url))
    yield client
    client.close()


@pytest.fixture
def raw(rc: redis.Redis) -> redis.Redis:
    """A plain client for seeding and checking keys (an alias that reads better in these tests)."""
    return rc


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless chromium for the module."""
    yield from chromium()


@pytest.fixture(scope="module")
def base_url(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`cogworker serve` on the session Redis, under /jobs (each test's Redis is flushed)."""
    directory = tmp_path_factory.mktemp("serve")
    args = ("--redis-url", redis_server.url, "--root-path", "/jobs")
    with serving(directory, *args, root="/jobs") as base:
        yield base


def _opened(browser: Browser, base_url: str, **options: bool) -> Iterator[Tab]:
    opened = Tab.open(browser, base_url, **options)
    yield opened
    opened.close()
    assert opened.errors == [], opened.errors


@pytest.fixture
def tab(browser: Browser, base_url: str, redis_url: str) -> Iterator[Tab]:
    """A fresh desktop tab on the dashboard, the test's Redis flushed; no console errors by
    the end."""
    yield from _opened(browser, base_url)


@pytest.fixture
def phone_tab(browser: Browser, base_url: str, redis_url: str) -> Iterator[Tab]:
    """The same on a phone's 390 px screen."""
    yield from _opened(browser, base_url, phone=True)


@pytest.fixture
def dark_tab(browser: Browser, base_url: str, redis_url: str) -> Iterator[Tab]:
    """A desktop tab in dark mode."""
    yield from _opened(browser, base_url, dark=True)
