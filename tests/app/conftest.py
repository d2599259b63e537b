"""Fixtures of the worker-process tests: a side-effect client, a cogworker Client, workers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

import cogworker
from tests.app.helpers import Workers
from tests.support.processes import CogworkerFactory


@pytest.fixture
def rc(redis_url: str) -> Iterator[redis.Redis]:
    """A client of the test's (flushed) Redis, for setting up and checking keys."""
    client = redis.Redis.from_url(redis_url, socket_timeout=10.0)
    yield client
    client.close()


@pytest.fixture
def client(redis_url: str) -> Iterator[cogworker.Client]:
    """A cogworker Client on the test's Redis."""
    enqueuer = cogworker.Client(cogworker.Config(redis_url=redis_url))
    yield enqueuer
    enqueuer.close()


@pytest.fixture
def workers(cogworker_factory: CogworkerFactory, redis_url: str) -> Workers:
    """Starts `cogworker work` processes on the test's Redis, with the side-effect URL set."""
    return Workers(cogworker_factory, redis_url)
