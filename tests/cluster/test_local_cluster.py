"""The tests' local Redis Cluster is a real one, and cogworker's scripts run on it."""

from __future__ import annotations

import pytest
import redis

from cogworker.adapters import pipelines, scripts
from tests.support.cluster import LocalCluster

LOCK = "cogworker:{q:default}:unique:app.Send:default:abc"


def test_three_primaries_with_a_replica_each_serve_every_slot(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Three primaries share the 16,384 slots, and each has one replica of its own."""
    nodes = cluster_client.cluster_nodes()
    primaries = {node["node_id"]: node for node in nodes.values() if "master" in node["flags"]}
    replicas_of = [node["master_id"] for node in nodes.values() if "slave" in node["flags"]]
    assert len(local_cluster.primaries()) == len(primaries) == 3
    assert sorted(replicas_of) == sorted(primaries)
    served = sum(
        int(end) - int(start) + 1 for node in primaries.values() for start, end in node["slots"]
    )
    assert served == 16384


def test_a_script_runs_on_the_node_owning_its_slot_and_reloads_after_a_flush(
    cluster_client: redis.RedisCluster,
) -> None:
    """take_lock and release_lock run where the lock's slot lives, loaded again after
    SCRIPT FLUSH on every primary (NOSCRIPT), each applied once."""
    assert scripts.TAKE_LOCK(cluster_client, (LOCK,), ("jid-1", 60_000)) == 1
    cluster_client.execute_command("SCRIPT FLUSH")  # on every primary

    assert scripts.TAKE_LOCK(cluster_client, (LOCK,), ("jid-2", 60_000)) == 0
    assert cluster_client.get(LOCK) == b"jid-1"
    assert scripts.RELEASE_LOCK(cluster_client, (LOCK,), ("jid-1",)) == 1
    assert cluster_client.exists(LOCK) == 0


def test_a_script_given_keys_of_two_slots_is_refused_before_it_is_sent(
    cluster_client: redis.RedisCluster,
) -> None:
    """Keys of two queues' slots in one call: redis-py refuses it, nothing is written."""
    other = "cogworker:{q:other}:inprogress:host:1"
    cluster_client.lpush(other, "{}")
    with pytest.raises(redis.RedisClusterException, match="same key slot"):
        scripts.DEFER(
            cluster_client,
            (other, "cogworker:{q:default}:schedule", "cogworker:{q:default}:located"),
            ("{}", 1.0, "", "1", "j1"),
        )
    assert cluster_client.lrange(other, 0, -1) == [b"{}"]


def test_a_pipeline_s_forgotten_scripts_are_loaded_and_each_applied_once(
    cluster_client: redis.RedisCluster,
) -> None:
    """After SCRIPT FLUSH, a pipeline of take_lock on two queues' slots (two primaries):
    NOSCRIPT from each node, the script loaded and each call run again, once."""
    other = "cogworker:{q:critical}:unique:app.Send:critical:abc"
    assert cluster_client.keyslot(other) != cluster_client.keyslot(LOCK)
    cluster_client.execute_command("SCRIPT FLUSH")
    pipe = pipelines.pipeline(cluster_client)
    scripts.TAKE_LOCK.queue(pipe, (LOCK,), ("jid-1", 60_000))
    scripts.TAKE_LOCK.queue(pipe, (other,), ("jid-2", 60_000))
    assert scripts.run_pipeline(cluster_client, pipe) == [1, 1]
    assert (cluster_client.get(LOCK), cluster_client.get(other)) == (b"jid-1", b"jid-2")
