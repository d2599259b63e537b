"""Which tests run on which Redis topology (tests/support/topology.py): marks and the hook.

A test module marked `on_both_topologies` runs each of its tests that reaches
Redis (through `redis_url` or a fixture built on it) on one node, then on the
local cluster; a test marked `single_node_only` in such a module runs on one
node only (it kills, pauses or counts the round trips of one server).  The
closest `topologies(...)` mark wins.  A test taking `client_kind` (or
`either_client`) runs with each client on each of its topologies.
"""

from __future__ import annotations

import pytest

from tests.support.clients import CLIENT_KINDS
from tests.support.topology import TOPOLOGIES, Topology

#: A module's mark: each of its tests that reaches Redis runs on one node, then on the cluster.
on_both_topologies = pytest.mark.topologies(*TOPOLOGIES)
#: A test's mark, in a module marked for both: it needs one server (to kill, pause, ...).
single_node_only = pytest.mark.topologies("single")


def generate_topologies(metafunc: pytest.Metafunc) -> None:
    """Parametrize `topology` as the test's closest `topologies` mark says, when it has one
    and reaches `topology` (through `redis_url` or any fixture built on it), and
    `client_kind` over both clients."""
    mark = metafunc.definition.get_closest_marker("topologies")
    topologies: tuple[Topology, ...] = ()
    if mark is not None and "topology" in metafunc.fixturenames:
        topologies = mark.args
    if "client_kind" not in metafunc.fixturenames:
        if topologies:
            metafunc.parametrize("topology", topologies, indirect=True)
        return
    if not topologies:
        metafunc.parametrize("client_kind", CLIENT_KINDS, indirect=True)
        return
    pairs = [(topology, kind) for topology in topologies for kind in CLIENT_KINDS]
    metafunc.parametrize(("topology", "client_kind"), pairs, indirect=True)
