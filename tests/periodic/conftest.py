"""Fixtures of the periodic tests: worker processes with the jobs' side-effect Redis set."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.app.cli_runner import Cli
from tests.support.processes import CogworkerFactory, CogworkerProcess

StartWorker = Callable[..., CogworkerProcess]


@pytest.fixture
def start_worker(cogworker_factory: CogworkerFactory, redis_url: str) -> StartWorker:
    """Start `cogworker work tests.periodic.jobs:NAME` on the test's Redis (`cron=` sets CRON)."""

    def start(name: str, *, cron: str | None = None) -> CogworkerProcess:
        env = {"COGWORKER_TEST_REDIS_URL": redis_url}
        if cron is not None:
            env["COGWORKER_TEST_CRON"] = cron
        return cogworker_factory(f"tests.periodic.jobs:{name}", redis_url=redis_url, env=env)

    return start


@pytest.fixture
def cli(redis_url: str) -> Cli:
    """The `cogworker` commands, on the test's Redis."""
    return Cli(redis_url)
