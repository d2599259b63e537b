"""Fixtures of the Redis Cluster tests: a client of the local cluster (`local_cluster`, in
tests/conftest.py, as the suites run on it too), and a node that checks slots, started once
per session by the first test that asks and stopped at its end; a test that stops nodes or
moves slots starts a cluster of its own (`own_cluster`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.support.cluster import LocalCluster, slot_checking_server
from tests.support.redis_server import RedisServer


@pytest.fixture
def cluster_client(local_cluster: LocalCluster) -> Iterator[redis.RedisCluster]:
    """A client of the local cluster, emptied (every primary) before the test."""
    client = local_cluster.client()
    client.flushall(target_nodes=redis.RedisCluster.PRIMARIES)
    yield client
    client.close()


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A cluster of this test's own (three primaries, a replica each), to stop or reshard."""
    cluster = LocalCluster(tmp_path / "own-cluster").start()
    yield cluster
    cluster.close()


@pytest.fixture
def own_node(tmp_path: Path) -> Iterator[RedisServer]:
    """A one-node cluster owning every slot, this test's own (to stop, or close clients of)."""
    node = slot_checking_server(tmp_path / "node")
    yield node
    node.close()


@pytest.fixture(scope="session")
def slot_checker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One node in cluster mode owning every slot: it refuses CROSSSLOT like a cluster."""
    server = slot_checking_server(tmp_path_factory.mktemp("slot-checker"))
    yield server
    server.close()


@pytest.fixture
def slot_checked(slot_checker: RedisServer) -> Iterator[redis.Redis]:
    """A plain client of the slot-checking node, emptied before the test."""
    with slot_checker.client() as client:
        client.flushall()
        yield client
