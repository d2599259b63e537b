"""`Client`'s cluster client on the real local cluster: a connection kept per thread and node
(`adapters/per_thread.py`'s `PinnedClusterClient`), safe across threads, a killed connection,
redirects, forks, and closed with the client.

`default`, `bulk` and `critical` hash to slots 270, 7860 and 13508: one on
each of the three primaries.  The redirect test moves a slot, on a cluster of
its own.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.per_thread import PinnedClusterClient
from tests.cluster import jobs
from tests.cluster.test_cluster_drain import cluster_url
from tests.production_redis.jobs import Drain
from tests.support.cluster import LocalCluster
from tests.support.processes import wait_until
from tests.support.redis_server import RedisServer

QUEUES = ("default", "bulk", "critical")
THREADS = 8
#: Each thread's rounds: one single enqueue and a bulk one of two jobs on each queue.
ROUNDS = 10


class BulkDrain(Drain, queue="bulk"):
    """`Drain` on the bulk queue (on the middle primary)."""


CLASSES = (Drain, BulkDrain, jobs.CriticalDrain)


def client_of(cluster: LocalCluster) -> cogworker.Client:
    """A `Client` of `cluster`, as an application makes one."""
    return cogworker.Client(
        attrs.evolve(jobs.config, redis_url=cluster_url(cluster), track_status=False)
    )


def pinned_of(client: cogworker.Client) -> PinnedClusterClient:
    """`client`'s Redis client: the connection factory's pinned cluster client."""
    assert isinstance(client.redis, PinnedClusterClient)
    return client.redis


def queued_jids(admin: redis.RedisCluster, queue: str) -> list[str]:
    """The jids on `queue`'s list, oldest first."""
    return jids_of(admin.lrange(keys.queue(queue), 0, -1))


def jids_of(payloads: list[bytes]) -> list[str]:
    """The jids of a queue's payloads (its list, newest first), oldest first."""
    return [json.loads(payload)["jid"] for payload in reversed(payloads)]


def names_on(node: RedisServer) -> list[str]:
    """The names of `node`'s client connections that have one."""
    with node.client() as admin:
        return sorted(entry["name"] for entry in admin.client_list() if entry["name"])


def test_threads_sharing_a_client_push_each_job_once_each_on_its_own_connections(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Eight threads share a client, each naming its connection on every primary, then
    enqueueing singly and in bulk on three primaries: every job is queued once, and each
    thread still reads its own name on every primary (no connection changed hands)."""
    client = client_of(local_cluster)
    pinned = pinned_of(client)
    primaries = pinned.get_primaries()
    pushed: list[list[str | None]] = [[] for _ in range(THREADS)]
    wrong: list[str] = []

    def work(number: int) -> None:
        name = f"t{number}"
        for node in primaries:
            pinned.client_setname(name, target_nodes=node)
        for round_ in range(ROUNDS):
            for job in CLASSES:
                pushed[number].append(client.enqueue(job, round_))
                pushed[number] += client.enqueue_many(job, [[round_], [round_]])
        wrong.extend(
            f"{name} on {node.name}: {pinned.client_getname(target_nodes=node)!r}"
            for node in primaries
            if pinned.client_getname(target_nodes=node) != name
        )

    threads = [threading.Thread(target=work, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert wrong == []
    every = sorted(jid for jids in pushed for jid in jids if jid is not None)
    assert len(every) == THREADS * ROUNDS * len(CLASSES) * 3
    assert sorted(jid for queue in QUEUES for jid in queued_jids(cluster_client, queue)) == every
    client.close()


def test_a_killed_connection_fails_one_enqueue_and_the_next_works(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """The server closing a thread's kept connection (CLIENT KILL) fails that thread's next
    enqueue there as Redis unavailable, sending nothing; the one after connects again."""
    client = client_of(local_cluster)
    pinned = pinned_of(client)
    first = client.enqueue(Drain, 1)
    node = pinned.get_node_from_key(keys.queue("default"))
    assert node is not None
    killed = pinned.client_id(target_nodes=node)
    with redis.Redis(host=node.host, port=node.port) as admin:
        assert admin.client_kill_filter(_id=killed) == 1
    with pytest.raises(cogworker.EnqueueUnavailableError):
        client.enqueue(Drain, 2)
    third = client.enqueue(Drain, 3)
    assert pinned.client_id(target_nodes=node) != killed
    assert queued_jids(cluster_client, "default") == [first, third]
    client.close()


def test_a_forked_child_pushes_over_connections_of_its_own(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """A child forked after the parent's first enqueue connects anew (another connection id
    on the queue's primary) and pushes; the parent's connection is still its own after."""
    client = client_of(local_cluster)
    pinned = pinned_of(client)
    first = client.enqueue(Drain, 1)
    node = pinned.get_node_from_key(keys.queue("default"))
    parents = pinned.client_id(target_nodes=node)
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, reports through its exit code
        ok = pinned.client_id(target_nodes=node) != parents and client.enqueue(Drain, 2)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert pinned.client_id(target_nodes=node) == parents
    third = client.enqueue(Drain, 3)
    jids = queued_jids(cluster_client, "default")
    assert len(jids) == 3
    assert (jids[0], jids[2]) == (first, third)
    client.close()


def test_closing_the_client_closes_every_threads_connections(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Three threads, still running, each name their kept connections and enqueue; once the
    client is closed, no node has a connection of those names left."""
    client = client_of(local_cluster)
    named = threading.Barrier(4)
    closed = threading.Event()
    threads = [
        threading.Thread(target=name_and_enqueue, args=(client, f"closing-{n}", named, closed))
        for n in range(3)
    ]
    for thread in threads:
        thread.start()
    named.wait(30)
    primaries = local_cluster.primaries()
    assert [len(names_on(node)) for node in primaries] == [3, 3, 3]
    client.close()
    wait_until(
        lambda: not any(names_on(node) for node in primaries),
        10.0,
        message=lambda: f"named connections left: {[names_on(node) for node in primaries]}",
    )
    closed.set()
    for thread in threads:
        thread.join(30)


def test_a_finished_threads_connections_are_closed(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Threads that name their kept connections, enqueue and end leave no connection of
    those names on any node, the client still open."""
    client = client_of(local_cluster)
    done = threading.Event()
    done.set()
    for n in range(5):
        thread = threading.Thread(
            target=name_and_enqueue, args=(client, f"gone-{n}", threading.Barrier(1), done)
        )
        thread.start()
        thread.join(30)
    primaries = local_cluster.primaries()
    wait_until(
        lambda: not any(names_on(node) for node in primaries),
        10.0,
        message=lambda: f"named connections left: {[names_on(node) for node in primaries]}",
    )
    assert client.enqueue(Drain, 1) is not None
    client.close()


def name_and_enqueue(
    client: cogworker.Client, name: str, named: threading.Barrier, closed: threading.Event
) -> None:
    """Name this thread's connection to every primary `name`, enqueue a job on each, wait
    at `named`, then until `closed` is set."""
    pinned = pinned_of(client)
    for node in pinned.get_primaries():
        pinned.client_setname(name, target_nodes=node)
    for job in CLASSES:
        client.enqueue(job, 1)
    named.wait(30)
    closed.wait(30)


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A cluster of this test's own (three primaries, no replicas), to move a slot of."""
    cluster = LocalCluster(tmp_path / "own-cluster", replicas=0).start()
    yield cluster
    cluster.close()


def test_a_push_follows_ask_then_moved_over_kept_connections(own_cluster: LocalCluster) -> None:
    """`default`'s slot migrating, its keys moved: the client's next push is answered ASK
    and runs on the new owner; once the slot is the new owner's, the next meets MOVED and
    runs there too.  Each job is queued once, on the new owner."""
    client = client_of(own_cluster)
    pinned = pinned_of(client)
    first = client.enqueue(Drain, 1)
    queue = keys.queue("default")
    slot = pinned.keyslot(queue)
    source = server_at(own_cluster, pinned.get_node_from_key(queue))
    target = server_at(own_cluster, pinned.get_node_from_key(keys.queue("critical")))
    migrating = start_migration(slot, source, target)
    asked = client.enqueue(Drain, 2)
    assert migrating == pinned.get_node_from_key(queue).port == source.port  # no MOVED yet
    finish_migration(slot, own_cluster, target)
    moved = client.enqueue(Drain, 3)
    assert pinned.get_node_from_key(queue).port == target.port
    with target.client() as admin:
        assert jids_of(admin.lrange(queue, 0, -1)) == [first, asked, moved]
    with source.client() as admin:
        assert admin.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    client.close()


def server_at(cluster: LocalCluster, node: redis.cluster.ClusterNode | None) -> RedisServer:
    """The process of `cluster` behind `node`."""
    assert node is not None
    return next(server for server in cluster.nodes if server.port == node.port)


def start_migration(slot: int, source: RedisServer, target: RedisServer) -> int:
    """Mark `slot` migrating from `source` to `target` and move its keys; `source`'s port."""
    with target.client() as admin:
        admin.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(source))
    with source.client() as admin:
        admin.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(target))
        names = admin.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100)
        assert names
        admin.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", *names)
    return source.port


def finish_migration(slot: int, cluster: LocalCluster, target: RedisServer) -> None:
    """Give `slot` to `target`, told to every primary."""
    owner = node_id(target)
    for node in cluster.primaries():
        with node.client() as admin:
            admin.execute_command("CLUSTER", "SETSLOT", slot, "NODE", owner)


def node_id(node: RedisServer) -> str:
    """`node`'s cluster id."""
    with node.client() as admin:
        return bytes(admin.execute_command("CLUSTER", "MYID")).decode()
