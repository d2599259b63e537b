"""`pytest --fast` keeps the tests that start no process, and fails one that does."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import REPO_ROOT

#: A child that turns the fast tier's guard on, then starts a redis-server as a test might.
STARTS_A_SERVER = """
import subprocess
from tests.support.fast_tier import refuse_processes
refuse_processes()
subprocess.run(["redis-server", "--version"], check=True)
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """`args` run from the repository's root; what they said and their exit status."""
    return subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.processes
def test_a_fast_run_refuses_any_process() -> None:
    """With the fast tier's guard on, starting a redis-server fails, naming the rule."""
    child = run(sys.executable, "-c", STARTS_A_SERVER)
    assert child.returncode != 0
    assert "ProcessStartedError: the fast tier starts no process" in child.stderr
    assert "redis-server" in child.stderr


@pytest.mark.processes
def test_the_fast_tier_is_chosen_by_what_tests_use() -> None:
    """A test without process fixtures is in; one taking Redis, or marked, is out."""
    collected = run(
        *(sys.executable, "-m", "pytest", "--fast", "--collect-only", "-q"),
        "tests/app/test_config_file_fields.py",
        "tests/adapters/test_settle_many.py",  # every test takes Redis
        "tests/adapters/test_embedded_redis.py",  # one test starts a server itself
    )
    chosen = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
    names = [line for line in collected.stdout.splitlines() if "::" in line]
    assert chosen == {
        "tests/app/test_config_file_fields.py",
        "tests/adapters/test_embedded_redis.py",
    }
    assert not any("starts_the_embedded_redis" in name for name in names)
    assert "deselected" in collected.stdout
