"""Jobs, APP config and helpers of the failover tests (tests/cluster/test_cluster_failover.py).

The jobs are the fault suite's oracle job, `Count`, on two queues whose
slots live on different primaries of a `LocalCluster`: `critical` (slot
13508, the last primary `redis-cli --cluster create` makes) and `default`
(slot 270, the first).  The helpers find a key's primary among the
cluster's processes, wait until every replica has every write its primary
took, stop and start every node without losing a write, and wait for a
drain's end.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import redis

from tests.faults import oracle
from tests.faults.jobs import Count
from tests.faults.jobs import config as fault_config
from tests.support.cluster import LocalCluster
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer

#: `critical` first: strict priority, so its queue is mid-drain when its primary fails.
QUEUES = ("critical", "default")

#: The fault suite's timings, but a threshold far longer than a failover (a node timeout of
#: 2 s, then the election): no process is judged gone while its slot's primary is down, so
#: what the failover costs is all a test sees.  Quiet logs: 5,000 jobs.
config = attrs.evolve(
    fault_config,
    queues=QUEUES,
    heartbeat_interval=0.5,
    orphan_threshold=10.0,
    log_level="WARNING",
)


class CountCritical(Count, queue="critical"):
    """`Count` on the critical queue."""


class CountDefault(Count, queue="default"):
    """`Count` on the default queue."""


def primary_of(cluster: LocalCluster, key: str) -> RedisServer:
    """The node (process) that is the primary of `key`'s slot now."""
    with cluster.client() as client:
        node = client.get_node_from_key(key)
    return next(server for server in cluster.nodes if server.port == node.port)


def wait_until_replicated(cluster: LocalCluster, timeout: float = 20.0) -> None:
    """Wait until every replica has acknowledged every write its primary had taken by now,
    so that a failover loses none of them."""
    for primary in cluster.primaries():
        with primary.client(socket_timeout=5.0) as client:
            info = client.info("replication")
            written = int(info["master_repl_offset"])
            wait_until(
                lambda client=client, written=written: _replicas_reached(client, written),
                timeout,
                message=f"a replica of {primary.port} never acknowledged offset {written}",
            )


def _replicas_reached(client: redis.Redis, offset: int) -> bool:
    """Whether every replica of `client`'s primary acknowledged `offset`, and it has one."""
    info = client.info("replication")
    replicas = [value for key, value in info.items() if str(key).startswith("slave")]
    return bool(replicas) and all(int(replica["offset"]) >= offset for replica in replicas)


def wait_until_drained(
    cluster: LocalCluster, oracle_file: Path, jids: Sequence[str], timeout: float
) -> None:
    """Wait until the oracle saw every job of `jids` end and none is left on a queue, a
    list or a set of the cluster (a job run again after a lost write ends later)."""
    wait_until(
        lambda: set(jids) <= oracle.finished(oracle_file),
        timeout,
        interval=0.2,
        message=lambda: f"{len(set(jids) - oracle.finished(oracle_file))} jobs never ended",
    )
    with cluster.client() as client:
        wait_until(
            lambda: not set(jids) & oracle.places(client).keys(),
            timeout,
            interval=0.5,  # a scan of every primary
            message=lambda: f"jobs still waiting: {set(jids) & oracle.places(client).keys()}",
        )


def restart_every_node(cluster: LocalCluster, workers: Sequence[CogworkerProcess]) -> None:
    """Stop every node cleanly, each saving its data first, wait until each of `workers`
    met the cluster unreachable, and start them again (the same ports and directories)."""
    for node in cluster.nodes:
        with node.client(socket_timeout=5.0) as client:
            # The nodes run with no save points: one makes SIGTERM's shutdown save an RDB,
            # which the start loads.
            client.config_set("save", "3600 1")
    for node in cluster.nodes:
        node.stop()
    wait_until(
        lambda: all(_UNREACHABLE in worker.log_text() for worker in workers),
        30,
        interval=0.1,
        message=lambda: f"a worker never met the cluster unreachable:\n{workers[0].log_tail()}",
    )
    for node in cluster.nodes:
        node.start()
    cluster.wait_until_ok()


#: The name of what redis-py's cluster client raises once no node answers its refresh.
_UNREACHABLE = "RedisClusterUnreachableError"


@attrs.frozen
class LostShard:
    """A shard `lose_shard` killed: its slot ranges (first, last), none served now."""

    ranges: tuple[tuple[int, int], ...]


def lose_shard(cluster: LocalCluster, key: str) -> LostShard:
    """kill -9 the primary of `key`'s slot and its replicas, and have every other node
    forget them, as an operator removes a lost shard: its slots are served by nobody."""
    primary = primary_of(cluster, key)
    with primary.client(socket_timeout=5.0) as client:
        own = client.execute_command("CLUSTER", "MYID").decode()
        ranges = _own_slot_ranges(client.execute_command("CLUSTER", "NODES").decode())
        replicas = client.execute_command("CLUSTER", "REPLICAS", own)
        ids = {own} | {line.decode().split()[0] for line in replicas}
    lost = [node for node in cluster.nodes if _node_id(node) in ids]
    assert len(lost) == 1 + cluster.replicas, f"{len(lost)} nodes of the shard found"
    for node in lost:
        node.kill()
    for node in cluster.nodes:
        if node.is_running:
            with node.client(socket_timeout=5.0) as client:
                for gone in ids:
                    client.execute_command("CLUSTER", "FORGET", gone)
    return LostShard(ranges=ranges)


def give_slots(cluster: LocalCluster, lost: LostShard, keeper: RedisServer) -> None:
    """Give `lost`'s slots to the primary `keeper` (empty: the shard's data died with it),
    and wait until the cluster is ok again."""
    with keeper.client(socket_timeout=5.0) as client:
        for first, last in lost.ranges:
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        client.execute_command("CLUSTER", "BUMPEPOCH")
    cluster.wait_until_ok()


def _node_id(node: RedisServer) -> str:
    """`node`'s cluster id."""
    with node.client(socket_timeout=5.0) as client:
        return str(client.execute_command("CLUSTER", "MYID").decode())


def _own_slot_ranges(nodes: str) -> tuple[tuple[int, int], ...]:
    """The slot ranges of the `myself` line of a `CLUSTER NODES` answer."""
    line = next(line for line in nodes.splitlines() if "myself" in line.split()[2])
    ranges = (part.partition("-") for part in line.split()[8:] if not part.startswith("["))
    return tuple((int(first), int(last or first)) for first, _, last in ranges)
