"""Redis Cluster for tests, on loopback ports: a real one, or one node that checks slots.

`LocalCluster` starts Debian's `redis-server` in cluster mode, `masters`
primaries with `replicas` replicas each (3 and 1 by default), joins them
with `redis-cli --cluster create --cluster-yes`, and waits until every
node says the cluster is ok and every replica has synced.  Each node has
its own directory (its `nodes.conf`) and its own bus port (`--cluster-port`,
so a data port near 65535 needs no bus port above it).  `close()` stops
every node, whatever state the start left them in.

With `tls` (certificates as the single-node TLS tests make them), every
node also listens on a TLS port of its own, and the cluster bus and
replication speak TLS (`--tls-cluster`, `--tls-replication`): a client
connected over TLS is told the nodes' TLS ports (`tls_addresses`, `tls_url`).
The plain port stays open for the set-up and the test's own looks.

`slot_checking_server` is a single node in cluster mode that owns every
slot: a plain `redis.Redis` talks to it as to any server (nothing is ever
redirected), and it refuses, as a cluster does, a script or a multi-key
command whose keys hash to more than one slot (CROSSSLOT).  It can't see a
script touch a key it wasn't given in KEYS (Redis 7.0 checks only that the
key is on the node, and this node has them all): a script that builds key
names from ARGV (today's `requeue.lua`) passes here and fails on a real
cluster (docs/redis-cluster.md, rule 2).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Self

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.retry import Retry

from tests.production_redis.servers import Certificates
from tests.support.processes import wait_until
from tests.support.redis_server import HOST, RedisServer, free_port

#: How long a node may be unreachable before the others fail it over (ms).
NODE_TIMEOUT_MS = 2000
#: Redis Cluster's slots: 0 .. 16383.
SLOTS = 16384
_JOIN_TIMEOUT = 60.0


def cluster_node(
    directory: Path, *, node_timeout_ms: int = NODE_TIMEOUT_MS, tls: Certificates | None = None
) -> RedisServer:
    """A started redis-server in cluster mode (in no cluster yet), in `directory`; with `tls`,
    also speaking TLS on a port of its own (see `tls_arguments`).

    The bus port is picked free just before the start; a start that finds it
    taken meanwhile is tried again with another.
    """
    directory.mkdir(parents=True, exist_ok=True)
    failure: Exception | None = None
    for _attempt in range(3):
        server = RedisServer(
            directory,
            extra_args=(
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(node_timeout_ms),
                "--cluster-port", str(free_port()),
                *tls_arguments(tls),
            ),
        )  # fmt: skip
        try:
            return server.start()
        except RuntimeError as error:  # the bus port taken between the pick and the start
            failure = error
            server.stop()
            (directory / "nodes.conf").unlink(missing_ok=True)
    raise RuntimeError(f"no cluster node would start in {directory}") from failure


def slot_checking_server(directory: Path) -> RedisServer:
    """A started one-node cluster owning every slot (see the module's docstring)."""
    server = cluster_node(directory)
    try:
        with server.client() as admin:
            admin.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, SLOTS - 1)
        wait_until(
            lambda: _cluster_ok(server),
            10.0,
            message=lambda: f"the one-node cluster never got ok; log:\n{server.log_tail()}",
        )
    except BaseException:
        server.close()
        raise
    return server


class LocalCluster:
    """`masters` primaries with `replicas` replicas each, on 127.0.0.1, in `directory`."""

    def __init__(
        self,
        directory: Path,
        *,
        masters: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = NODE_TIMEOUT_MS,
        tls: Certificates | None = None,
    ) -> None:
        if masters < 3:
            raise ValueError(f"redis-cli --cluster create needs 3 masters or more, not {masters}")
        self.directory = directory
        self.masters = masters
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        #: With certificates, the nodes speak TLS to clients, each other and their replicas.
        self.tls = tls
        self.nodes: list[RedisServer] = []

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """Every node's (host, port), in the order they were started."""
        return [(HOST, node.port) for node in self.nodes]

    def client(self) -> redis.RedisCluster:
        """A new `redis.RedisCluster` returning bytes; it follows MOVED and ASK itself and
        retries nothing else (a test sees the fault it made)."""
        return redis.RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in self.addresses],
            decode_responses=False,
            retry=Retry(NoBackoff(), 0),
        )

    def primaries(self) -> list[RedisServer]:
        """The nodes that are primaries now (a failover changes which)."""
        return [node for node in self.nodes if _role(node) == "master"]

    def start(self) -> Self:
        """Start every node, join them into one cluster, and wait until it is ok."""
        try:
            count = self.masters * (1 + self.replicas)
            for index in range(count):
                self.nodes.append(
                    cluster_node(
                        self.directory / f"node-{index}",
                        node_timeout_ms=self.node_timeout_ms,
                        tls=self.tls,
                    )
                )
            self._create()
            self.wait_until_ok()
        except BaseException:
            self.close()
            raise
        return self

    def wait_until_ok(self, timeout: float = _JOIN_TIMEOUT) -> None:
        """Wait until every running node says the cluster is ok and every replica has synced."""
        running = [node for node in self.nodes if node.is_running]
        wait_until(
            lambda: all(_cluster_ok(node) and _synced(node) for node in running),
            timeout,
            message=lambda: (
                "the cluster never got ok:\n"
                + "\n".join(f"node {node.port}: {node.log_tail(5)}" for node in running)
            ),
        )

    def close(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL); their directories stay with `directory`."""
        for node in self.nodes:
            node.close()

    def _create(self) -> None:
        command = [
            "redis-cli", "--cluster", "create",
            *(f"{host}:{port}" for host, port in self.addresses),
            "--cluster-replicas", str(self.replicas), "--cluster-yes",
        ]  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_JOIN_TIMEOUT, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
            )


def _info_fields(text: str) -> dict[str, str]:
    pairs = (line.partition(":") for line in text.splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, _, value in pairs}


def _ask(node: RedisServer, *command: str) -> dict[str, str]:
    """`CLUSTER INFO` or `INFO replication` of `node` as fields; none if it doesn't answer."""
    try:
        with node.client(socket_timeout=2.0, socket_connect_timeout=2.0) as client:
            reply = client.execute_command(*command)
    except redis.RedisError:
        return {}
    if isinstance(reply, dict):  # redis-py parses INFO itself
        return {str(key): str(value) for key, value in reply.items()}
    return _info_fields(reply.decode() if isinstance(reply, bytes) else str(reply))


def _cluster_ok(node: RedisServer) -> bool:
    info = _ask(node, "CLUSTER", "INFO")
    return info.get("cluster_state") == "ok" and info.get("cluster_slots_ok") == str(SLOTS)


def _role(node: RedisServer) -> str:
    return _ask(node, "INFO", "replication").get("role", "")


def _synced(node: RedisServer) -> bool:
    info = _ask(node, "INFO", "replication")
    return info.get("role") == "master" or info.get("master_link_status") == "up"


def tls_arguments(tls: Certificates | None) -> tuple[str, ...]:
    """A cluster node's TLS options: a free TLS port for clients, TLS on the cluster bus and
    to its replicas, clients not asked for certificates (none with no `tls`)."""
    if tls is None:
        return ()
    return (
        "--tls-port", str(free_port()),
        "--tls-cert-file", str(tls.cert_file),
        "--tls-key-file", str(tls.key_file),
        "--tls-ca-cert-file", str(tls.ca_file),
        "--tls-auth-clients", "no",
        "--tls-cluster", "yes",
        "--tls-replication", "yes",
    )  # fmt: skip


def tls_port(node: RedisServer) -> int:
    """The TLS port `node` was started with (`tls_arguments`)."""
    return int(node.extra_args[node.extra_args.index("--tls-port") + 1])


def tls_addresses(cluster: LocalCluster) -> list[tuple[str, int]]:
    """Every node's (host, TLS port) of a cluster started with `tls`."""
    return [(HOST, tls_port(node)) for node in cluster.nodes]


def tls_url(cluster: LocalCluster, credentials: str = "") -> str:
    """A rediss+cluster:// URL naming two of a TLS cluster's nodes and trusting its CA
    (`credentials`: `USER:PASSWORD@`, or none)."""
    assert cluster.tls is not None, "the cluster was started without tls"
    nodes = ",".join(f"{host}:{port}" for host, port in tls_addresses(cluster)[:2])
    return f"rediss+cluster://{credentials}{nodes}/0?tls_ca_file={cluster.tls.ca_file}"
