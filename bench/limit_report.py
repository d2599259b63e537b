#!/usr/bin/env python
"""Every drain of a run as a share of the Redis limit measured in the same run (issue #25).

    BENCH_PEERS_DIR=PEERS python bench/limit_report.py --results DIR

DIR is a bench/run.sh results folder: `redis_limit/*.json` (the harness's
redis_limit.py, once per repetition, on the run's Redis) and one folder per
workload (`noop`, `fail`, `io`) of run.py's format. The limit is a job's
minimum on a reliable queue, LPUSH + LMOVE + LREM, pipelined 100 jobs at a
time, from 1 and from 2 processes (the median over the repetitions);
each drain's median is shown as a share of both. What a job costs beside it: at the
limit (`limit_cost/*.json`, bench/limit_cost.py: the same loop, its client's CPU, Redis's
CPU and commands per job) and in each drain (run.py's worker CPU, Redis CPU and commands
per job): what separates a drain from the limit.
"""

from __future__ import annotations

import argparse
import glob
import json
import os

from workload_report import agg, header, load, median

WORKLOADS = {"noop": "success (no-op INCR)", "fail": "failing", "io": "I/O-bound (10 ms wait)"}
#: redis_limit.py's measurements shown, and the two a drain is divided by
LIMITS = {
    "unpipelined_1proc": "LPUSH + BLMOVE + LREM, unpipelined, 1 process",
    "unpipelined_2procs": "the same, 2 processes",
    "pipelined100_1proc": "LPUSH + LMOVE + LREM, pipelined 100, 1 process",
    "pipelined100_2procs": "the same, 2 processes",
}
SHARE_OF = ("pipelined100_1proc", "pipelined100_2procs")
#: What a job costs, at the limit (limit_cost.py) and in a drain (run.py): the columns.
COSTS = ("client CPU µs/job", "Redis CPU µs/job", "Redis cmds/job")
DRAIN_COSTS = (
    "drain.worker_cpu_us_per_job",
    "drain.redis_cpu_us_per_job",
    "drain.redis_cmds_per_job",
)
LIMIT_COSTS = ("client_cpu_us_per_job", "redis_cpu_us_per_job", "redis_cmds_per_job")
COST = "{:,.1f}"
#: Issue #25's target: the tuned configuration's drain, of the 2-process limit.
TUNED, TUNED_TARGET = ("cogworker", "p2c20pf40"), 0.40


def load_limits(results: str, folder: str = "redis_limit") -> list[dict]:
    runs = []
    for path in sorted(glob.glob(os.path.join(results, folder, "*.json"))):
        with open(path) as f:
            runs.append(json.load(f))
    return runs


def share(rate: float | None, limit: float | None) -> str:
    return "—" if rate is None or not limit else f"{100 * rate / limit:.1f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True, help="a bench/run.sh results folder")
    args = ap.parse_args()
    runs, costs = load_limits(args.results), load_limits(args.results, "limit_cost")
    print(f"### The Redis limit in this run (jobs/s; median of {len(runs)}, (min–max))\n")
    print("| measurement (redis_limit.py) | jobs/s | " + " | ".join(COSTS) + " |")
    print("|---|---|" + "---|" * len(COSTS))
    for key, label in LIMITS.items():
        cost = [agg(costs, f"{key}.{c}", COST) if key in SHARE_OF else "" for c in LIMIT_COSTS]
        print(f"| {label} | {agg(runs, f'{key}.per_s')} | " + " | ".join(cost) + " |")
    if costs:
        print(f"\nThe costs: bench/limit_cost.py, the pipelined loop again ({len(costs)} runs).")
    limits = {key: median(runs, f"{key}.per_s") for key in SHARE_OF}
    for workload, title in WORKLOADS.items():
        data = load(os.path.join(args.results, workload))
        if data:
            print_drains(data, title, limits)
            if workload == "noop" and TUNED in data:
                rate = median(data[TUNED], "drain.drain_rate")
                print(f"\n{':'.join(TUNED)}, of the 2-process limit: ", end="")
                print(f"{share(rate, limits[SHARE_OF[1]])} (target {TUNED_TARGET:.0%})")


def print_drains(data: dict, title: str, limits: dict[str, float | None]) -> None:
    """One workload's drains: their rates, as shares of the limits, and their costs."""
    print()
    header(
        f"{title} drains as a share of the Redis limit",
        ["drain jobs/s", "of the 1-process limit", "of the 2-process limit",
         "worker CPU µs/job", *COSTS[1:]],
    )  # fmt: skip
    for (lib, var), reps in data.items():
        rate = median(reps, "drain.drain_rate")
        print(
            f"| {lib}:{var} | {agg(reps, 'drain.drain_rate')} | "
            + " | ".join(share(rate, limits[key]) for key in SHARE_OF)
            + " | "
            + " | ".join(agg(reps, path, COST) for path in DRAIN_COSTS)
            + " |"
        )


if __name__ == "__main__":
    main()
