"""Fixtures of the production-Redis tests: a TLS server and a Sentinel topology, per module.

Each is started once for the module that asks for it (five processes for
Sentinel) and stopped after it; tests that need a Redis of their own for a
destructive step (a failover) live in a module of their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.production_redis.servers import SentinelTopology, TlsServer


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    """A redis-server with TLS, and the CA that signed its certificate."""
    server = TlsServer.start(tmp_path_factory.mktemp("tls"))
    yield server
    server.server.close()


@pytest.fixture(scope="module")
def sentinel_topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelTopology]:
    """A primary, a replica and three sentinels (quorum 2) watching them as `mymaster`."""
    topology = SentinelTopology.start(tmp_path_factory.mktemp("sentinel"))
    yield topology
    topology.close()
