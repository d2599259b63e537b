"""Fixtures of the worker-process tests: workers whose jobs record into the test's Redis."""

from __future__ import annotations

import pytest

from tests.app.helpers import Workers
from tests.support.processes import CogworkerFactory


@pytest.fixture
def workers(cogworker_factory: CogworkerFactory, redis_url: str) -> Workers:
    """Starts `cogworker work` processes on the test's Redis, with the side-effect URL set."""
    return Workers(cogworker_factory, redis_url)
