"""Fixtures of the worker-process tests: workers whose jobs record into the test's Redis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import cogworker
from cogworker.app import default_clients
from tests.app.cli_runner import Cli
from tests.app.helpers import Workers
from tests.support.processes import CogworkerFactory


@pytest.fixture
def workers(cogworker_factory: CogworkerFactory, redis_url: str) -> Workers:
    """Starts `cogworker work` processes on the test's Redis, with the side-effect URL set."""
    return Workers(cogworker_factory, redis_url)


@pytest.fixture
def configured(redis_url: str) -> Iterator[cogworker.Client]:
    """`cogworker.configure` pointed at the test's Redis (for `Job.perform_in` / `perform_at`)."""
    default = cogworker.configure(cogworker.Config(redis_url=redis_url))
    yield default
    default.close()
    default_clients._default = None


@pytest.fixture
def cli(redis_url: str) -> Cli:
    """The inspecting commands of `cogworker`, on the test's Redis."""
    return Cli(redis_url)
