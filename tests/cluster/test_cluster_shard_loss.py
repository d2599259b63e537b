"""A shard of a Redis Cluster lost mid-drain (its primary and replica killed, forgotten by
the others, its slots given to a primary that lived): redis-py's cluster client raises what
is not a `redis.RedisError` until the slots are served again, and two `cogworker work`
processes draining a queue of a primary that lived ride it out."""

from __future__ import annotations

from pathlib import Path

import pytest

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.cluster.test_cluster_drain import cluster_url
from tests.cluster.test_cluster_failover import (
    assert_alive_and_well,
    start_two_workers,
)
from tests.faults import oracle
from tests.faults.conftest import stop_all
from tests.support.cluster import LocalCluster
from tests.support.cluster_failover import (
    CountDefault,
    give_slots,
    lose_shard,
    primary_of,
    wait_until_drained,
)
from tests.support.processes import CogworkerFactory, wait_until

JOBS = 3_000
#: Jobs ended before the shard is lost: well into the drain, far from its end.
ENDED_BEFORE_THE_LOSS = 600
#: What redis-py's topology refresh raises while some slots have no node.
UNCOVERED = "All slots are not covered"


def enqueue_default(url: str) -> list[str]:
    """`JOBS` jobs on `default`: their jids."""
    client = cogworker.Client(cogworker.Config(redis_url=url))
    try:
        pushed = client.enqueue_many(CountDefault, [[n] for n in range(JOBS)])
    finally:
        client.close()
    jids = [jid for jid in pushed if jid is not None]
    assert len(jids) == JOBS
    return jids


@pytest.mark.solo  # six Redis processes, two workers, and a topology change, better alone
def test_a_shard_lost_mid_drain_leaves_the_workers_alive_and_the_drain_whole(
    own_cluster: LocalCluster, cogworker_factory: CogworkerFactory, tmp_path: Path
) -> None:
    """`critical`'s shard killed (primary and replica) and forgotten mid-drain of 3,000
    jobs of `default`: while its slots have no node, every command meets `CLUSTERDOWN`
    and redis-py's refresh then raises a bare `RedisClusterException`; both workers back
    off on it as on any outage, and once the slots are served again every job ends, once,
    and nothing is left anywhere."""
    url, oracle_file = cluster_url(own_cluster), tmp_path / "oracle"
    keeper = primary_of(own_cluster, keys.queue("default"))
    assert keeper is not primary_of(own_cluster, keys.queue("critical"))
    jids = enqueue_default(url)
    workers = start_two_workers(cogworker_factory, url, oracle_file)
    wait_until(
        lambda: len(oracle.finished(oracle_file)) >= ENDED_BEFORE_THE_LOSS,
        60,
        interval=0.05,
        message="the drain never got going",
    )

    lost = lose_shard(own_cluster, keys.queue("critical"))
    wait_until(
        lambda: all(UNCOVERED in worker.log_text() for worker in workers),
        60,
        interval=0.2,
        message=lambda: f"a worker never met the slots uncovered:\n{workers[0].log_tail()}",
    )
    assert not set(jids) <= oracle.finished(oracle_file), "drained before the slots came back"
    give_slots(own_cluster, lost, keeper)
    wait_until_drained(own_cluster, oracle_file, jids, 90)
    assert_alive_and_well(workers)
    stop_all(*workers)

    starts, _ends = oracle.runs(oracle_file)
    assert starts.most_common(1)[0][1] == 1, starts.most_common(3)
    with own_cluster.client() as inspect:
        oracle.assert_each_in_one_place(inspect, jids, done=set(jids))
        oracle.assert_nothing_left_behind(inspect)
