"""Single enqueue on the cluster against the single node, in blocks taking turns (#22).

    python -m bench.cluster_turns [--rounds 15] [--block 1000] [--out DIR]

From the checkout's root, with cogworker importable. bench/cluster_bench.py
times each topology's 10,000 enqueues minutes apart; on a machine other
work shares, a burst of that work during one topology's phase swings a
repetition's ratio by half. Here the clients take turns in blocks of
`--block` single enqueues (the order rotating each round), so each round's
ratio compares the same minute:

* `single`: `Client` on the plain node (`PerThreadRedis`);
* `pinned`: `Client` on the 3-primary cluster (`PinnedClusterClient`: a
  connection per thread and node);
* `pooled`: `Client` on the cluster through a plain `ClusterClient` (what
  `Client` used before: redis-py's pool checkout per command).

Per block: this process's CPU plus Redis's (`INFO cpu`, summed over the
primaries) per job. Printed per layout (bench/cluster_work.py's `spread`
and `one`): each cluster client's CPU per job over the single node's, the
median and min–max over the rounds, and the medians of the parts.
The topologies are bench/cluster_topologies.py's, started and stopped here;
the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench import cluster_bench  # first: it puts the harness and bench/ on sys.path

# isort: split
import cluster_work  # bench/, through the path above
import run  # the harness's
from cluster_topologies import Topology, topologies

import cogworker
from cogworker.adapters.connection import connect_cluster

REPO = Path(__file__).resolve().parents[1]
VARIANT = "p2c10"


def pooled(url: str, classes: tuple[type[cogworker.Job], ...]) -> cluster_work.SpreadClient:
    """The adapter's client on the cluster, through a `ClusterClient` without pinning."""
    client = cluster_work.SpreadClient(url, VARIANT, classes)
    config = client.client.config
    client.client.close()
    client.client = cogworker.Client(config, client=connect_cluster(config.redis_target()))
    return client


def block(topology: Topology, client: cluster_work.SpreadClient, jobs: int) -> tuple[float, float]:
    """`jobs` single enqueues: (client CPU, Redis CPU) µs per job."""
    cpu, redis_cpu = time.process_time(), run.redis_cpu(topology)
    client.enqueue_each("noop", range(jobs))
    return (
        (time.process_time() - cpu) / jobs * 1e6,
        (run.redis_cpu(topology) - redis_cpu) / jobs * 1e6,
    )


def turns(single: Topology, cluster: Topology, layout: str, args: argparse.Namespace) -> None:
    """The rounds of one layout, and its line per cluster client."""
    classes = cluster_bench.LAYOUTS[layout]
    clients = {
        "single": (single, cluster_work.SpreadClient(single.url, VARIANT, classes)),
        "pinned": (cluster, cluster_work.SpreadClient(cluster.url, VARIANT, classes)),
        "pooled": (cluster, pooled(cluster.url, classes)),
    }
    for topology, client in clients.values():  # connections, the layout check, registrations
        block(topology, client, 300)
    costs: dict[str, list[tuple[float, float]]] = {name: [] for name in clients}
    for number in range(args.rounds):
        names = list(clients)
        for name in names[number % 3 :] + names[: number % 3]:
            costs[name].append(block(*clients[name], args.block))
    for _, client in clients.values():
        client.close()
    for name in ("pinned", "pooled"):
        print(f"{layout:6} {name}: {summary(costs[name], costs['single'])}", flush=True)


def summary(cluster: list[tuple[float, float]], single: list[tuple[float, float]]) -> str:
    """Cluster ÷ single node per round, and the medians of client and Redis CPU."""
    ratios = [sum(c) / sum(s) for c, s in zip(cluster, single, strict=True)]

    def parts(costs: list[tuple[float, float]]) -> str:
        return "+".join(f"{statistics.median(part):.0f}" for part in zip(*costs, strict=True))

    return (
        f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f}); "
        f"µs per job {parts(cluster)} against {parts(single)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--block", type=int, default=1000, help="single enqueues a turn")
    ap.add_argument(
        "--out", default=str(REPO / "bench/results" / time.strftime("turns-%Y%m%d-%H%M%S"))
    )
    args = ap.parse_args()
    print(f"load before: {os.getloadavg()}", flush=True)
    with topologies(Path(args.out) / "redis") as (single, cluster):
        for layout in cluster_bench.LAYOUTS:
            turns(single, cluster, layout, args)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
