"""One version everywhere: pyproject.toml's, as the CLI, the package, a worker and the dashboard
say it."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
import redis
from litestar.testing import TestClient

import cogworker
from cogworker.dashboard import create_app
from tests.app.helpers import Workers, process_hash, wait_for_processes
from tests.support.processes import REPO_ROOT


def pyproject_version() -> str:
    """The `version` pyproject.toml declares: the one place it is written."""
    with (REPO_ROOT / "pyproject.toml").open("rb") as file:
        version: str = tomllib.load(file)["project"]["version"]
    return version


@pytest.mark.processes
def test_the_package_and_the_cli_say_pyprojects_version() -> None:
    """`cogworker.__version__` and `cogworker --version` are pyproject.toml's version."""
    shown = subprocess.run(
        [sys.executable, "-m", "cogworker", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout

    assert cogworker.__version__ == pyproject_version()
    assert shown.strip() == f"cogworker, version {pyproject_version()}"


def test_a_workers_heartbeat_and_the_dashboard_say_pyprojects_version(
    rc: redis.Redis, workers: Workers, redis_url: str
) -> None:
    """A worker's heartbeat hash and the dashboard's footer carry pyproject.toml's version."""
    worker = workers.start()
    [identity] = wait_for_processes(rc, 1, worker)

    with TestClient(create_app(cogworker.Config(redis_url=redis_url))) as browser:
        page = browser.get("/workers").text

    assert process_hash(rc, identity)["version"] == pyproject_version()
    assert f"cogworker {pyproject_version()} ·" in page
