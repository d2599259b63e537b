"""The inspecting commands and the dashboard on the real local cluster: `cogworker migrate`
writes a fresh cluster's layout number, refuses old-layout keys clearly; the others and
the dashboard's pages read every queue."""

from __future__ import annotations

import redis
from litestar.testing import TestClient

import cogworker
from cogworker.dashboard import create_app
from tests.app.cli_runner import Cli
from tests.cluster import jobs
from tests.cluster.test_cluster_drain import cluster_url
from tests.production_redis.jobs import Drain
from tests.support.cluster import LocalCluster


def test_migrate_writes_a_fresh_cluster_s_number_and_refuses_old_keys(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Nothing to move: the number only (twice: up to date); an old-layout key: a refusal
    saying why, nothing written."""
    cli = Cli(cluster_url(local_cluster))
    first = cli.run("migrate")
    assert first.status == 0, first.stderr
    assert "layout 0 -> 11" in first.stdout
    assert cli.run("migrate").stdout.strip() == "layout 11: up to date, nothing to move"

    cluster_client.delete("cogworker:layout")
    cluster_client.rpush("cogworker:queue:default", "{}")
    refused = cli.run("migrate")
    assert refused.status == 1
    assert "keys of an older layout (1, e.g. cogworker:queue:default)" in refused.stderr
    assert cluster_client.get("cogworker:layout") is None


def test_stats_and_queues_read_queues_on_two_primaries(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """The counters' MGETs and the queues' reads, per queue in its slot, in one pipeline."""
    url = cluster_url(local_cluster)
    client = cogworker.Client(cogworker.Config(redis_url=url))
    client.enqueue_many(jobs.CriticalDrain, [[1], [2]])
    client.enqueue(Drain, 3)
    client.close()
    cli = Cli(url)
    queues = cli.run("queues")
    assert queues.status == 0, queues.stderr
    sizes = {line.split()[0]: line.split()[1] for line in queues.lines[1:]}
    assert sizes == {"critical": "2", "default": "1"}
    stats = cli.run("stats")
    assert stats.status == 0, stats.stderr
    assert any(line.split() == ["enqueued", "3"] for line in stats.lines), stats.stdout


def test_the_dashboard_serves_its_pages_from_a_cluster(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Every page reading merged views (queues, sets, counters, INFO of one node) answers
    200 with jobs on two primaries."""
    url = cluster_url(local_cluster)
    client = cogworker.Client(cogworker.Config(redis_url=url))
    client.enqueue_many(jobs.CriticalDrain, [[1]])
    client.enqueue_in(60, Drain, 2)
    client.close()
    pages = [
        "/", "/about", "/queues", "/queue?name=critical", "/workers", "/scheduled", "/retries",
        "/dead", "/history", "/metrics", "/periodic", "/limits", "/batches",
    ]  # fmt: skip
    with TestClient(app=create_app(cogworker.Config(redis_url=url))) as browser:
        answers = {page: browser.get(page).status_code for page in pages}
    assert answers == dict.fromkeys(pages, 200)
