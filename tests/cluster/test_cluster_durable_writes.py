"""Durable writes (`min_replicas`) on the real local cluster: each primary's writes and their
WAIT on one connection, redirects followed, and a shortfall when a replica is away.

`default`, `bulk` and `critical` hash to slots 270, 7860 and 13508: one on
each of the three primaries.  Tests that stop nodes or move slots start a
cluster of their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import durable_writes, pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.replication import Replication
from tests.cluster import jobs
from tests.cluster.test_cluster_drain import cluster_url
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.support.cluster import LocalCluster
from tests.support.processes import CogworkerProcess
from tests.support.redis_server import RedisServer

QUEUES = ("default", "bulk", "critical")
ONE_REPLICA = Replication(replicas=1, timeout=3.0)
APP = "tests.cluster.jobs:config"
MIX = drain.Mix(plain=30, retried=3, scheduled=3, dead=2, unique=1)


class BulkDrain(Drain, queue="bulk"):
    """`Drain` on the bulk queue (on the middle primary), which the worker doesn't work."""


def queue_pushes(
    client: redis.RedisCluster, queues: tuple[str, ...]
) -> list[durable_writes.Command]:
    """The commands of a cluster pipeline pushing one job onto each of `queues` (values:
    nothing sent)."""
    pipe = pipelines.pipeline(client)
    for queue in queues:
        pipe.lpush(keys.queue(queue), f"job-{queue}")
    return scripts.queued(pipe)


def primary_of(client: redis.RedisCluster, queue: str) -> str:
    """The name (host:port) of the primary owning `queue`'s slot now."""
    return str(client.get_node_from_key(keys.queue(queue)).name)


def server_at(cluster: LocalCluster, name: str) -> RedisServer:
    """The node of `cluster` listening at `name` (host:port)."""
    return next(node for node in cluster.nodes if name.endswith(f":{node.port}"))


def replica_of(cluster: LocalCluster, primary: RedisServer) -> RedisServer:
    """The node replicating `primary`."""
    for node in cluster.nodes:
        with node.client() as admin:
            info = admin.info("replication")
        if info.get("role") == "slave" and int(info["master_port"]) == primary.port:
            return node
    raise AssertionError(f"no replica of {primary.port}")


def replica_length(replica: RedisServer, queue: str) -> int:
    """How many jobs `queue`'s list holds on `replica` (READONLY: a replica serves reads)."""
    with replica.client() as reader:
        pipe = reader.pipeline(transaction=False)
        pipe.execute_command("READONLY")
        pipe.llen(keys.queue(queue))
        return int(pipe.execute()[1])


def test_each_primary_waits_for_its_own_replica(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Pushes onto queues of three primaries, their script forgotten (NOSCRIPT, loaded, sent
    again): each primary's WAIT, after its write on the same connection, reached its one
    replica, and that replica has the job."""
    cluster_client.execute_command("SCRIPT", "FLUSH", target_nodes=redis.RedisCluster.PRIMARIES)
    written = durable_writes.run_on_primaries(
        cluster_client, queue_pushes(cluster_client, QUEUES), ONE_REPLICA
    )
    assert_each_primary_reached_its_replica(local_cluster, cluster_client, written)


def assert_each_primary_reached_its_replica(
    cluster: LocalCluster, client: redis.RedisCluster, written: durable_writes.Written
) -> None:
    """`written`, a push onto each of `QUEUES` (on three primaries), ran, each primary's
    WAIT reached its one replica, and that replica has the job."""
    assert written.replies == [1, 1, 1]
    assert written.reached == {primary_of(client, queue): 1 for queue in QUEUES}
    assert len(written.reached) == 3
    for queue in QUEUES:
        primary = server_at(cluster, primary_of(client, queue))
        assert replica_length(replica_of(cluster, primary), queue) == 1


@pytest.mark.usefixtures("cluster_client")  # (an emptied cluster)
def test_a_client_and_a_worker_with_min_replicas_drain_on_two_primaries(
    local_cluster: LocalCluster, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """min_replicas=1 in a cluster URL: every kind of enqueue on both queues returns, and a
    worker whose outcomes wait too drains them with no shortfall logged."""
    url = cluster_url(local_cluster) + "?min_replicas=1&replica_timeout=3"
    client = cogworker.Client(cogworker.Config(redis_url=url))
    drain.enqueue(client, MIX)
    client.enqueue_many(jobs.CriticalDrain, [[MIX.plain + MIX.scheduled + n] for n in range(10)])
    assert client.enqueue(BulkDrain, -1) is not None  # a third primary's WAIT
    client.close()
    both = drain.Mix(MIX.plain + 10, MIX.retried, MIX.scheduled, MIX.dead, MIX.unique)
    command = ["work", APP, "--redis-url", url]
    with CogworkerProcess(
        command, directory=tmp_path, env={"COGWORKER_TEST_REDIS_URL": redis_url}
    ) as worker:
        drain.wait_drained(rc, both, worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()
    assert "replicas-short" not in worker.log_text()
    assert "Traceback" not in worker.log_text()


def test_a_stopped_replica_is_a_shortfall_of_its_primary_only(own_cluster: LocalCluster) -> None:
    """With `default`'s primary's replica stopped, its WAIT reaches 0 and the enqueue raises
    saying 0 of 1; `critical`'s primary still reaches its replica."""
    client = own_cluster.client()
    default_primary = server_at(own_cluster, primary_of(client, "default"))
    replica_of(own_cluster, default_primary).stop()
    written = durable_writes.run_on_primaries(
        client, queue_pushes(client, ("default", "critical")), Replication(replicas=1, timeout=0.1)
    )
    assert written.reached == {
        primary_of(client, "default"): 0,
        primary_of(client, "critical"): 1,
    }
    url = cluster_url(own_cluster) + "?min_replicas=1&replica_timeout=0.1"
    enqueuer = cogworker.Client(cogworker.Config(redis_url=url))
    with pytest.raises(cogworker.EnqueueNotReplicatedError) as raised:
        enqueuer.enqueue(Drain, 1, jid="short-1")
    assert (raised.value.reached, raised.value.required) == (0, 1)
    assert raised.value.unknown == ("short-1",)
    assert enqueuer.enqueue(jobs.CriticalDrain, 2, jid="whole-2") == "whole-2"
    assert client.llen(keys.queue("default")) == 2
    enqueuer.close()
    client.close()


def test_asked_and_moved_writes_wait_on_the_node_that_ran_them(own_cluster: LocalCluster) -> None:
    """`default`'s slot migrating to `critical`'s primary: the push answered ASK runs there
    after ASKING, and once the slot has moved, a client's stale table meets MOVED; both
    times the WAIT that counts is the new owner's, which reached its replica."""
    client = own_cluster.client()
    slot = client.keyslot(keys.queue("default"))
    source = server_at(own_cluster, primary_of(client, "default"))
    target = server_at(own_cluster, primary_of(client, "critical"))
    source_id, target_id = node_id(source), node_id(target)
    with target.client() as admin:
        admin.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    with source.client() as admin:
        admin.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    asked = durable_writes.run_on_primaries(
        client, queue_pushes(client, ("default", "critical")), ONE_REPLICA
    )
    assert asked.replies == [1, 1]
    assert asked.reached == {primary_of(client, "critical"): 1}
    for node in (target, source):
        with node.client() as admin:
            admin.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    moved = durable_writes.run_on_primaries(client, queue_pushes(client, ("default",)), ONE_REPLICA)
    assert moved.replies == [2]
    assert moved.reached == {primary_of(client, "critical"): 1}
    assert primary_of(client, "default") == primary_of(client, "critical")
    assert client.llen(keys.queue("default")) == 2
    client.close()


def node_id(node: RedisServer) -> str:
    """`node`'s cluster id."""
    with node.client() as admin:
        return bytes(admin.execute_command("CLUSTER", "MYID")).decode()
