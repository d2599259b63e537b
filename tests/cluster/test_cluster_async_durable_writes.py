"""Durable writes (`min_replicas`) of an AsyncClient on the real local cluster: each primary's
writes and their WAIT on one connection of that node (`async_durable_writes`), redirects
followed, and a shortfall when a replica is away.

`default`, `bulk` and `critical` hash to one primary each (see
test_cluster_durable_writes.py, the same for `Client`).  Tests that stop nodes or move
slots start a cluster of their own.
"""

from __future__ import annotations

import asyncio

import pytest
import redis

import cogworker
from cogworker.adapters import async_durable_writes
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.async_cluster import AsyncCluster
from cogworker.adapters.connection import connect_cluster_async
from cogworker.adapters.redis_target import parse
from cogworker.adapters.replication import Replication
from tests.cluster import jobs
from tests.cluster.test_cluster_drain import cluster_url
from tests.cluster.test_cluster_durable_writes import (
    ONE_REPLICA,
    QUEUES,
    BulkDrain,
    assert_each_primary_reached_its_replica,
    node_id,
    primary_of,
    queue_pushes,
    replica_length,
    replica_of,
    server_at,
)
from tests.production_redis.jobs import Drain
from tests.support.cluster import LocalCluster

#: Durable writes asked for in a cluster URL (see `cluster_url`).
WAITING = "?min_replicas=1&replica_timeout=3"


def async_cluster(cluster: LocalCluster) -> AsyncCluster:
    """The connection factory's asyncio client of `cluster`."""
    return connect_cluster_async(parse(cluster_url(cluster), "test"))


def test_each_primary_waits_for_its_own_replica(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Pushes onto queues of three primaries, their script forgotten (NOSCRIPT, loaded, sent
    again): each primary's WAIT, after its write on one connection of that node, reached its
    one replica, and that replica has the job."""
    cluster_client.execute_command("SCRIPT", "FLUSH", target_nodes=redis.RedisCluster.PRIMARIES)
    commands = queue_pushes(cluster_client, QUEUES)

    async def send() -> async_durable_writes.Written:
        async with async_cluster(local_cluster) as client:
            return await async_durable_writes.run_on_primaries(client, commands, ONE_REPLICA)

    assert_each_primary_reached_its_replica(local_cluster, cluster_client, asyncio.run(send()))


def test_an_async_client_s_enqueues_wait_for_the_replicas_of_three_primaries(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """min_replicas=1 in a cluster URL: an AsyncClient's plain, bulk, unique and scheduled
    enqueues on queues of three primaries each return once that queue's replica has the
    job (each replica holds what its primary does when the enqueue returns)."""

    async def enqueue() -> None:
        config = cogworker.Config(redis_url=cluster_url(local_cluster) + WAITING)
        async with cogworker.AsyncClient(config) as client:
            assert await client.enqueue(Drain, 1) is not None
            assert len(await client.enqueue_many(jobs.CriticalDrain, [[2], [3]])) == 2
            assert await client.enqueue(BulkDrain, 4) is not None
            assert await client.enqueue(jobs.CriticalUnique, 5) is not None
            assert await client.enqueue_in(60, Drain, 6) is not None

    asyncio.run(enqueue())
    expected = {"default": 1, "critical": 3, "bulk": 1}
    for queue, length in expected.items():
        assert cluster_client.llen(keys.queue(queue)) == length
        primary = server_at(local_cluster, primary_of(cluster_client, queue))
        assert replica_length(replica_of(local_cluster, primary), queue) == length
    assert cluster_client.zcard(keys.schedule("default")) == 1


def test_a_stopped_replica_is_a_shortfall_of_its_primary_only(own_cluster: LocalCluster) -> None:
    """With `default`'s primary's replica stopped, its WAIT reaches 0 and an AsyncClient's
    enqueue raises saying 0 of 1, the job pushed all the same; `critical`'s primary still
    reaches its replica."""
    client = own_cluster.client()
    default_primary = server_at(own_cluster, primary_of(client, "default"))
    replica_of(own_cluster, default_primary).stop()
    commands = queue_pushes(client, ("default", "critical"))
    config = cogworker.Config(redis_url=cluster_url(own_cluster) + WAITING)

    async def send() -> tuple[async_durable_writes.Written, cogworker.EnqueueNotReplicatedError]:
        async with async_cluster(own_cluster) as cluster:
            short = Replication(replicas=1, timeout=0.1)
            written = await async_durable_writes.run_on_primaries(cluster, commands, short)
        async with cogworker.AsyncClient(config) as enqueuer:
            with pytest.raises(cogworker.EnqueueNotReplicatedError) as raised:
                await enqueuer.enqueue(Drain, 1, jid="short-1")
            assert await enqueuer.enqueue(jobs.CriticalDrain, 2, jid="whole-2") == "whole-2"
        return written, raised.value

    written, error = asyncio.run(send())
    assert written.reached == {primary_of(client, "default"): 0, primary_of(client, "critical"): 1}
    assert (error.reached, error.required, error.unknown) == (0, 1, ("short-1",))
    assert client.llen(keys.queue("default")) == 2
    assert client.llen(keys.queue("critical")) == 2
    client.close()


def test_asked_and_moved_writes_wait_on_the_node_that_ran_them(own_cluster: LocalCluster) -> None:
    """`default`'s slot migrating to `critical`'s primary: the push answered ASK runs there
    after ASKING, and once the slot has moved, the asyncio client's stale table meets
    MOVED; both times the WAIT that counts is the new owner's, which reached its replica."""
    client = own_cluster.client()
    slot = client.keyslot(keys.queue("default"))
    source = server_at(own_cluster, primary_of(client, "default"))
    target = server_at(own_cluster, primary_of(client, "critical"))
    source_id, target_id = node_id(source), node_id(target)
    commands = queue_pushes(client, ("default", "critical"))

    async def send() -> list[async_durable_writes.Written]:
        async with async_cluster(own_cluster) as cluster:
            await cluster.initialize()  # its table: `default` on its first primary
            with target.client() as admin:
                admin.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
            with source.client() as admin:
                admin.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
            asked = await async_durable_writes.run_on_primaries(cluster, commands, ONE_REPLICA)
            for node in (target, source):
                with node.client() as admin:
                    admin.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
            moved = await async_durable_writes.run_on_primaries(cluster, commands[:1], ONE_REPLICA)
            now = cluster.get_node_from_key(keys.queue("default"))
            assert now is not None
            assert now.port == target.port
            return [asked, moved]

    asked, moved = asyncio.run(send())
    new_owner = primary_of(client, "critical")
    assert (asked.replies, asked.reached) == ([1, 1], {new_owner: 1})
    assert (moved.replies, moved.reached) == ([2], {new_owner: 1})
    assert client.llen(keys.queue("default")) == 2
    client.close()
