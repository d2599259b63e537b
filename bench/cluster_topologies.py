"""The two Redis set-ups bench/cluster_bench.py compares, and what it reads of them.

Started with the tests' own code (tests/support: stdlib and redis-py only,
every wait bounded, every server stopped at exit, so a crashed run leaves no
redis-server behind): one plain node, and a local cluster of 3 primaries
without replicas (the single node has none either), its node timeout long
enough that a loaded machine fails no node. A `Topology` is also what the
harness's `run.drain` reads as "its Redis": INFO summed over the primaries,
the completion counter read on its own node.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import cluster_work
import common  # the harness's, on sys.path (bench/cluster_bench.py puts it there)
import psutil
import redis
import run
from tests.support.cluster import LocalCluster
from tests.support.redis_server import RedisServer

from cogworker.adapters import redis_keys

#: A node of the local cluster is failed only after this long unreachable (ms): a machine
#: loaded by other work must not make the cluster refuse commands mid-run.
NODE_TIMEOUT_MS = 30_000
#: How long each topology is watched at rest.
REST_SECONDS = 3.0


class Topology:
    """One Redis set-up: cogworker's URL, its primaries, and the node holding the
    harness's completion counter (its slot's, on a cluster)."""

    def __init__(
        self, name: str, url: str, primaries: list[RedisServer], counter: RedisServer,
        labels: list[str], plain: Callable[[], redis.Redis | redis.RedisCluster],
    ) -> None:  # fmt: skip
        """`labels`: what each primary holds (queues, the counter), for the tables; `plain`
        makes a redis-py client of the topology, for the control phase."""
        self.name, self.url, self.primaries, self.counter = name, url, primaries, counter
        self.labels, self.plain = labels, plain
        #: At the first completion a drain saw: (jobs done, workers' CPU s, Redis CPU s).
        self.first_done: tuple[int, float, float] | None = None
        self.nodes = [server.client() for server in primaries]
        self.counter_client = counter.client()
        self.cpu_replies: list[list[float]] = []

    # What the harness's run.drain reads of "its Redis" (`r`), over every primary.
    def info(self, section: str) -> dict[str, float]:
        """INFO `section`'s numbers summed over the primaries (each INFO cpu reply kept)."""
        replies = [node.info(section) for node in self.nodes]
        if section == "cpu":
            self.cpu_replies.append([_cpu(reply) for reply in replies])
        numbers = [k for k, v in replies[0].items() if isinstance(v, int | float)]
        return {key: sum(reply[key] for reply in replies) for key in numbers}

    def get(self, key: str) -> bytes | None:
        """The harness's completion counter, on its node; the first time it is not 0 in a
        drain, the workers' and Redis's CPU then (the start-up's), in `first_done`."""
        count = self.counter_client.get(key)
        if count and self.first_done is None:
            self.first_done = (int(count), workers_cpu(), run.redis_cpu(self))
        return count  # type: ignore[no-any-return]

    def flushall(self) -> None:
        for node in self.nodes:
            node.flushall()

    def cpu_by_node_since(self, mark: int, jobs: int) -> list[float]:
        """Each primary's Redis CPU µs per job between INFO cpu reply `mark` and the last."""
        first, last = self.cpu_replies[mark], self.cpu_replies[-1]
        return [(b - a) / jobs * 1e6 for a, b in zip(first, last, strict=True)]


def workers_cpu() -> float:
    """CPU seconds of this process's children but Redis: the drain's workers."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # one that ended meanwhile
            if child.name() != "redis-server":
                total += sum(child.cpu_times()[:2])
    return total


def _cpu(reply: dict[str, float]) -> float:
    return float(reply["used_cpu_user"]) + float(reply["used_cpu_sys"])


@contextlib.contextmanager
def topologies(directory: Path) -> Iterator[list[Topology]]:
    """A plain node and a 3-primary cluster, started; stopped after the block."""
    (directory / "single").mkdir(parents=True)
    single = RedisServer(directory / "single")
    cluster = LocalCluster(directory / "cluster", replicas=0, node_timeout_ms=NODE_TIMEOUT_MS)
    try:
        single.start()
        cluster.start()
        alone = Topology("single node", single.url, [single], single, ["everything"], single.client)
        yield [alone, clustered(cluster)]
    finally:
        cluster.close()
        single.close()


def clustered(cluster: LocalCluster) -> Topology:
    """The cluster as a topology, once the spread queues are seen on three primaries."""
    primaries = cluster.primaries()
    with cluster.client() as client:
        owners = [client.get_node_from_key(redis_keys.queue(q)).port for q in cluster_work.QUEUES]
        counter = client.get_node_from_key(common.DONE_KEY).port
    if len(set(owners)) != len(cluster_work.QUEUES):
        raise SystemExit(f"the spread queues' slots are on primaries {owners}, not all apart")
    labels = [
        " + ".join([*(f"queue {q}" for q, at in zip(cluster_work.QUEUES, owners, strict=True)
                      if at == node.port), *(["the counter"] if node.port == counter else [])])
        for node in primaries
    ]  # fmt: skip
    nodes = ",".join(f"{host}:{port}" for host, port in cluster.addresses)
    (held,) = (node for node in primaries if node.port == counter)
    url = f"redis+cluster://{nodes}/0"
    return Topology("3-primary cluster", url, primaries, held, labels, cluster.client)


def at_rest(topology: Topology) -> float:
    """Redis CPU ms per second, summed over the primaries, with no client doing anything."""
    before = run.redis_cpu(topology)
    time.sleep(REST_SECONDS)
    return (run.redis_cpu(topology) - before) / REST_SECONDS * 1e3
