#!/usr/bin/env python
"""Every drain of a run as a share of the Redis limit measured in the same run (issue #25).

    BENCH_PEERS_DIR=PEERS python bench/limit_report.py --results DIR

DIR is a bench/run.sh results folder: `redis_limit/*.json` (the harness's
redis_limit.py, once per repetition, on the run's Redis) and one folder per
workload (`noop`, `fail`, `io`) of run.py's format. The limit is a job's
minimum on a reliable queue, LPUSH + LMOVE + LREM, pipelined 100 jobs at a
time, from 1 and from 2 processes (the median over the repetitions);
each drain's median is shown as a share of both.
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


def load_limits(results: str) -> list[dict]:
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "redis_limit", "*.json"))):
        with open(path) as f:
            runs.append(json.load(f))
    return runs


def share(rate: float | None, limit: float | None) -> str:
    return "—" if rate is None or not limit else f"{100 * rate / limit:.1f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True, help="a bench/run.sh results folder")
    args = ap.parse_args()
    runs = load_limits(args.results)
    print(f"### The Redis limit in this run (jobs/s; median of {len(runs)}, (min–max))\n")
    print("| measurement (redis_limit.py) | jobs/s |")
    print("|---|---|")
    for key, label in LIMITS.items():
        print(f"| {label} | {agg(runs, f'{key}.per_s')} |")
    limits = {key: median(runs, f"{key}.per_s") for key in SHARE_OF}
    for workload, title in WORKLOADS.items():
        data = load(os.path.join(args.results, workload))
        if not data:
            continue
        print()
        header(
            f"{title} drains as a share of the Redis limit",
            ["drain jobs/s", "of the 1-process limit", "of the 2-process limit"],
        )
        for (lib, var), reps in data.items():
            rate = median(reps, "drain.drain_rate")
            print(
                f"| {lib}:{var} | {agg(reps, 'drain.drain_rate')} | "
                + " | ".join(share(rate, limits[key]) for key in SHARE_OF)
                + " |"
            )


if __name__ == "__main__":
    main()
