"""cogworker on a 3-primary Redis Cluster against a single node, same machine, one run (#22).

    python -m bench.cluster_bench [--n 10000] [--reps 3] [--variant p2c10] [--out DIR]

From the checkout's root, with cogworker importable. It starts its own Redis
(bench/cluster_topologies.py): one plain node, and a local cluster of 3
primaries without replicas. Then, per repetition, each topology in turn (the
order alternating between repetitions) and on it each layout of the jobs, `spread` (round-robin onto
three queues whose slots live on three different primaries, so the shards
share the work: bench/cluster_work.py) and `one` (the adapter's one queue,
one shard's work), FLUSHALL before each phase:

0. the control: N redis-py `LPUSH`es of a payload's size onto the same
   queues' lists, round-robin, without cogworker (what the round trips to
   the topology cost by themselves);
1. single enqueue: N `Client.enqueue` calls (the adapter's, bench/cogworker_bench.py);
2. bulk enqueue: N jobs with `Client.enqueue_many`, 1,000 a call;
3. drain: N jobs queued untimed, then the harness's `run.drain` (2 worker
   processes of the variant, time to the N-th completion INCR, start-up
   included), the Redis it reads being every primary summed.

Per phase: jobs/s, the enqueueing process's or the workers' CPU per job, Redis
CPU per job (`used_cpu_user` + `used_cpu_sys` deltas, summed over the
primaries, and per primary) and commands per job (`total_commands_processed`
deltas summed; Redis 7 counts the commands a script runs, as commandstats
does). Also each topology's Redis CPU at rest. Raw results go to
`DIR/results.json`, the tables (bench/cluster_report.py) to stdout and
`DIR/report.md`. The harness is found as bench/run.sh finds it
(BENCH_PEERS_DIR, else ../shared/bench/peers next to the checkout, else
/work/shared/bench/peers).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_HARNESS_PLACES = (REPO.parent / "shared/bench/peers", Path("/work/shared/bench/peers"))
os.environ.setdefault(
    "BENCH_PEERS_DIR",
    str(next((p for p in _HARNESS_PLACES if (p / "run.py").is_file()), _HARNESS_PLACES[0])),
)

from bench import workload_driver  # noqa: E402  (puts the harness and bench/ on sys.path)

# isort: split
import cluster_report  # noqa: E402  (bench/, through the path above)
import cluster_work  # noqa: E402
import cogworker_bench  # noqa: E402
import run  # noqa: E402  (the harness's)
from cluster_topologies import Topology, at_rest, topologies  # noqa: E402

LAYOUTS = {"spread": cluster_work.SPREAD, "one": cluster_work.ONE_QUEUE}


def costs_since(topology: Topology, before: tuple[float, ...], jobs: int) -> dict[str, float]:
    """Per job since `before` (a `mark`): rate, this process's CPU, Redis CPU and commands."""
    wall, cpu, redis_cpu, cmds = mark(topology)
    # each mark's INFO cpu and the earlier one's INFO stats are counted: 2 per node
    sent = 2 * len(topology.nodes)
    return {
        "rate": jobs / (wall - before[0]),
        "client_cpu_us_per_job": (cpu - before[1]) / jobs * 1e6,
        "redis_cpu_us_per_job": (redis_cpu - before[2]) / jobs * 1e6,
        "redis_cmds_per_job": (cmds - before[3] - sent) / jobs,
    }


def mark(topology: Topology) -> tuple[float, float, float, float]:
    """Now: wall clock, this process's CPU, Redis CPU and commands (the harness's readings)."""
    return (time.perf_counter(), time.process_time(), run.redis_cpu(topology),
            run.redis_cmds(topology))  # fmt: skip


def timed_enqueue(topology: Topology, client_of, method: str, args: argparse.Namespace):
    """One enqueue phase of N jobs (`method`, `enqueue_each` or `enqueue_bulk`, of the
    client `client_of()` makes), with its costs."""
    topology.flushall()
    client = client_of()
    try:
        first = len(topology.cpu_replies)
        before = mark(topology)
        getattr(client, method)("noop", range(args.n))
        result = costs_since(topology, before, args.n)
    finally:
        client.close()
    result["redis_cpu_us_per_job_by_node"] = topology.cpu_by_node_since(first, args.n)
    return result


def timed_drain(topology: Topology, layout: str, args: argparse.Namespace) -> dict:
    """N jobs queued untimed, then the harness's drain by the variant's workers."""
    classes = LAYOUTS[layout]
    topology.flushall()
    client = cluster_work.SpreadClient(topology.url, args.variant, classes)
    try:
        client.enqueue_bulk("noop", range(args.n))
    finally:
        client.close()
    workers = _Workers(topology.url, cluster_work.queue_flags(classes))
    first, topology.first_done = len(topology.cpu_replies), None
    logs = os.path.join(args.out, "logs", f"{topology.name.split()[0]}-{layout}.log")
    result = run.drain(workers, args.variant, topology.counter.url, topology, args.n, logs, 120)
    result["redis_cpu_us_per_job_by_node"] = topology.cpu_by_node_since(first, args.n)
    return {**result, **after_first(topology, result)}


def after_first(topology: Topology, drain: dict) -> dict[str, float]:
    """The drain's CPU per job after its first completion: start-up (imports, connections,
    first fetch) left out, like the harness's steady rate."""
    if topology.first_done is None:
        return {}
    count, workers, redis_cpu = topology.first_done
    done = drain["completed_at_end"]
    workers_end = drain["worker_cpu_us_per_job"] * done / 1e6
    jobs = done - count
    return {
        "steady_worker_cpu_us_per_job": (workers_end - workers) / jobs * 1e6,
        "steady_redis_cpu_us_per_job": (sum(topology.cpu_replies[-1]) - redis_cpu) / jobs * 1e6,
    }


class _Workers:
    """What run.drain asks of an adapter module: its name and worker command lines (the
    adapter's, on cogworker's URL of the topology, serving the queues `flags` name; the URL
    run.drain gives is the counter's, for the jobs' INCR)."""

    NAME = cogworker_bench.NAME

    def __init__(self, url: str, flags: list[str]) -> None:
        self.url, self.flags = url, flags

    def worker_commands(self, _counter_url: str, variant: str) -> list[list[str]]:
        return [[*cmd, *self.flags] for cmd in cogworker_bench.worker_commands(self.url, variant)]


def one_repetition(tops: list[Topology], rep: int, args: argparse.Namespace) -> list[dict]:
    """Every topology (the order alternating by repetition), every layout, every phase."""
    found = []
    for topology in tops if rep % 2 else reversed(tops):
        for layout in LAYOUTS:
            res = {"topology": topology.name, "layout": layout, "rep": rep, "n": args.n}
            res.update(measure(topology, layout, args))
            print(cluster_report.line(res), flush=True)
            found.append(res)
    return found


def measure(topology: Topology, layout: str, args: argparse.Namespace) -> dict[str, dict]:
    """The phases of one layout on one topology: the control, the two enqueues, the drain."""
    classes = LAYOUTS[layout]
    queues = cluster_work.QUEUES[: len(classes)]
    plain = functools.partial(cluster_work.PlainPush, topology.plain, queues)
    ours = functools.partial(cluster_work.SpreadClient, topology.url, args.variant, classes)
    return {
        "plain": timed_enqueue(topology, plain, "enqueue_each", args),
        "single": timed_enqueue(topology, ours, "enqueue_each", args),
        "bulk": timed_enqueue(topology, ours, "enqueue_bulk", args),
        "drain": timed_drain(topology, layout, args),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=10_000, help="jobs per phase")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--variant", default="p2c10", choices=sorted(cogworker_bench.VARIANTS))
    ap.add_argument(
        "--out", default=str(REPO / "bench/results" / time.strftime("cluster-%Y%m%d-%H%M%S"))
    )
    args = ap.parse_args()
    workload_driver.start(args.out)
    info = cluster_report.run_info(args)
    with topologies(Path(args.out) / "redis") as tops:
        info["nodes"] = {t.name: t.labels for t in tops}
        info["rest_ms_per_s"] = {t.name: at_rest(t) for t in tops}
        results = [
            res for rep in range(1, args.reps + 1) for res in one_repetition(tops, rep, args)
        ]
    info["load_after"] = os.getloadavg()
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"info": info, "results": results}, f, indent=1)
    report = cluster_report.report(info, results)
    Path(args.out, "report.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
