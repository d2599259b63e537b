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
from tests.web.browser import chromium
from tests.web.helpers import Web


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
