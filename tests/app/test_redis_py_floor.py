"""A Redis Cluster needs redis-py 8.2 (`CLUSTER_REDIS_PY`: its cluster clients are built on
8.2's); on an older one, which pyproject.toml allows (Celery's kombu and arq still pin
redis-py below 6), cogworker runs on one server and refuses a cluster with a clear error.

These tests check what the redis-py they run on must do: the whole suite runs them on the
highest redis-py allowed, and scripts/test.sh's lowest-end step (`.venv-redis-lowest`) on
the lowest, with the single-node adapter suite and a worker's enqueue, run and retry.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters.redis_client import CLUSTER_REDIS_PY, redis_py_version
from tests.support.processes import run_to_exit

#: No node answers here: on a redis-py that can, cogworker tries to reach the cluster.
NO_CLUSTER = "redis+cluster://127.0.0.1:1"
NEEDS = f"needs redis-py 8.2 or later; this is redis-py {redis.__version__}"
UNREACHABLE = "no node of the Redis Cluster answers"
OLDER = redis_py_version() < CLUSTER_REDIS_PY


@pytest.mark.processes  # runs `cogworker work`
def test_the_worker_refuses_a_cluster_on_an_older_redis_py_in_one_line(tmp_path: Path) -> None:
    """Exit status 2, one line naming both versions; on 8.2 it looks for the cluster."""
    status, lines = run_to_exit(
        tmp_path, "work", "tests.app.jobs:config", "--redis-url", NO_CLUSTER
    )

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert (NEEDS if OLDER else UNREACHABLE) in lines[0], lines


def test_the_client_refuses_a_cluster_on_an_older_redis_py_naming_both_versions() -> None:
    """A ConfigError before connecting anywhere; on 8.2 a RedisUnavailableError (it looked)."""
    expected = cogworker.ConfigError if OLDER else cogworker.RedisUnavailableError
    with pytest.raises(expected) as info:
        cogworker.Client(cogworker.Config(redis_url=NO_CLUSTER))

    assert (NEEDS if OLDER else "127.0.0.1:1") in str(info.value)
