"""The fast tier (`pytest --fast`, `scripts/test.sh --fast`): the tests that start no process.

A test is in it unless it asks for a fixture that starts one (`PROCESS_FIXTURES`, the
roots: a fixture built on them is seen through pytest's closure of the test's fixtures)
or carries the `processes` mark (a test that starts one itself).  So a new test joins
the tier, or stays out of it, by what it uses; no list of tests is kept.

What keeps the rule honest is `refuse_processes`: a fast run fails any test that starts
a process (a redis-server, a worker, a browser, any subprocess), naming it, so a process
fixture missing from the list, or a test missing its mark, can't slip into the tier.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import pytest

#: The fixtures that start processes (or ask for one by name, out of pytest's sight).
PROCESS_FIXTURES = frozenset(
    {
        *("redis_server", "redis_url", "redis_server_factory", "local_cluster"),
        *("cogworker_factory", "browser", "tls_server", "sentinel_topology"),
        *("django_project", "own_cluster", "own_node", "slot_checker", "fault_url"),
        *("shared_runs", "old_redis_py"),
    }
)
#: The audit events of starting a process (see the `sys.addaudithook` docs' table).
SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.fork", "os.exec"})


def is_fast(item: pytest.Item) -> bool:
    """Whether `item` starts no process: no process fixture in its closure, no mark."""
    fixtures = set(getattr(item, "fixturenames", ()))
    return not (fixtures & PROCESS_FIXTURES) and item.get_closest_marker("processes") is None


def select_fast(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep only the fast items (the rest reported as deselected)."""
    slow = [item for item in items if not is_fast(item)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if is_fast(item)]


class ProcessStartedError(RuntimeError):
    """A test of the fast tier started a process."""


def refuse_processes() -> None:
    """From now on in this interpreter, starting a process raises `ProcessStartedError`."""

    def hook(event: str, args: Sequence[object]) -> None:
        if event in SPAWN_EVENTS:
            raise ProcessStartedError(
                f"the fast tier starts no process, but this test did ({event} {args[:2]!r}): "
                "give the fixture that starts it a place in PROCESS_FIXTURES, or the test "
                "the `processes` mark (tests/support/fast_tier.py)"
            )

    sys.addaudithook(hook)
