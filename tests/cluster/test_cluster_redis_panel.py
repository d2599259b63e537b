"""The dashboard's Redis grids on the real local cluster: the Overview's panel and the About
page show the three primaries combined, not redis-py's default node."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import redis
from litestar.testing import TestClient

import cogworker
from cogworker.dashboard import create_app
from cogworker.domain.cluster_info import human_bytes
from tests.cluster.test_cluster_drain import cluster_url
from tests.support.cluster import LocalCluster
from tests.support.processes import wait_until


@pytest.fixture
def primaries(local_cluster: LocalCluster) -> Iterator[list[redis.Redis]]:
    """A client of each primary, open for the whole test: the connections the dashboard counts
    stay the same while it reads and while the test does."""
    with ExitStack() as stack:
        yield [stack.enter_context(node.client()) for node in local_cluster.primaries()]


def _cards(html: str) -> dict[str, str]:
    """Label -> value of every card on a page."""
    found = re.findall(r'card-kicker">([^<]*)</span><span class="card-value">([^<]*)<', html)
    return dict(found)


def _summed(primaries: list[redis.Redis]) -> dict[str, str]:
    """The grid's figures as each primary's INFO gives them now, summed."""
    infos = [{**node.info("memory"), **node.info("clients")} for node in primaries]
    for info in infos:  # the figure the grid writes is the one Redis writes for one node
        assert info["used_memory_human"] == human_bytes(info["used_memory"])

    def total(field: str) -> int:
        return sum(int(info[field]) for info in infos)

    return {
        "Memory Usage": human_bytes(total("used_memory")),
        "Peak Memory Usage": human_bytes(total("used_memory_peak")),
        "Connections": str(total("connected_clients")),
    }


def test_the_redis_panel_sums_the_three_primaries(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster, primaries: list[redis.Redis]
) -> None:
    """Overview: memory, peak memory and connections summed over the primaries, "Primaries 3";
    About: the version they all run, the cluster's mode, "Primaries 3"."""
    assert len(primaries) == 3
    versions = {str(node.info("server")["redis_version"]) for node in primaries}
    assert len(versions) == 1
    with TestClient(app=create_app(cogworker.Config(redis_url=cluster_url(local_cluster)))) as web:
        seen: list[tuple[dict[str, str], dict[str, str]]] = []

        def panel_is_the_sum() -> bool:
            # Memory moves a little while nodes gossip and free buffers: read both sides
            # again until they agree (they can't, if the panel shows any other figure).
            cards = _cards(web.get("/").text)
            expected = _summed(primaries)
            seen.append(({label: cards.get(label, "missing") for label in expected}, expected))
            return seen[-1][0] == expected

        wait_until(panel_is_the_sum, message=lambda: "panel {}, primaries {}".format(*seen[-1]))
        overview = _cards(web.get("/").text)
        about = _cards(web.get("/about").text)
    assert overview["Primaries"] == "3"
    assert overview["Server version"] == versions.pop()
    assert about["Server version"] == overview["Server version"]
    assert about["Mode"] == "cluster"
    assert about["Primaries"] == "3"
