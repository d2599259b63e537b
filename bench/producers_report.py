#!/usr/bin/env python
"""Tables of a many-producers run (bench/producers_run.py's results), like the harness's report.py.

    BENCH_PEERS_DIR=PEERS python bench/producers_report.py --results DIR

Median over repetitions with (min–max); then every failure of every
repetition, the clients shared and those left out (and why), and
cogworker's rows as ratios (issue #25's target 4: from THREADS threads, at
least the best peer's rate).
"""

from __future__ import annotations

import argparse

import producers_work
from workload_report import agg, configurations, get, header, load, median, problems, ratio_line


def miscounted(reps: list[dict]) -> str:
    """Repetitions whose jobs found queued after the threaded phase weren't N."""
    bad = [
        f"#{r['rep']}: {found:,} queued of {r['n']:,}"
        for r in reps
        if (found := get(r, "threads.queued_after")) is not None and found != r["n"]
    ]
    return "; ".join(bad)


def print_table(data: dict) -> None:
    threads = producers_work.THREADS
    header(
        f"{threads} threads sharing one client (median of repetitions, (min–max))",
        [
            "N", "reps", f"enqueue/s {threads} threads", "enqueue/s 1 thread",
            f"{threads} threads ÷ 1", f"client CPU µs/job {threads} threads",
            "client CPU µs/job 1 thread", f"Redis CPU µs/job {threads} threads",
            "Redis cmds/job", "problems",
        ],
    )  # fmt: skip
    for (lib, var), reps in data.items():
        many, one = median(reps, "threads.rate"), median(reps, "single.rate")
        scaling = f"{many / one:.2f}" if many and one else "—"
        failed = problems(reps)
        found = "; ".join(filter(None, [miscounted(reps), "" if failed == "none" else failed]))
        print(
            f"| {lib}:{var} | {reps[0]['n']:,} | {len(reps)} | {agg(reps, 'threads.rate')} "
            f"| {agg(reps, 'single.rate')} | {scaling} "
            f"| {agg(reps, 'threads.cpu_us_per_job', '{:,.0f}', False)} "
            f"| {agg(reps, 'single.cpu_us_per_job', '{:,.0f}', False)} "
            f"| {agg(reps, 'threads.redis_cpu_us_per_job', '{:,.0f}', False)} "
            f"| {agg(reps, 'threads.redis_cmds_per_job', '{:.1f}', False)} | {found or 'none'} |"
        )


def print_targets(data: dict) -> None:
    peers = {
        f"{lib}:{var}": rate
        for (lib, var), reps in data.items()
        if lib != "cogworker" and (rate := median(reps, "threads.rate")) is not None
    }
    threads = producers_work.THREADS
    print(f"\n### cogworker from {threads} threads (ratios of medians; issue #25's target 4)\n")
    for (lib, var), reps in data.items():
        if lib == "cogworker":
            print(f"- cogworker:{var}")
            print(ratio_line("enqueue", median(reps, "threads.rate"), peers, max, "≥ 1× the best"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True, help="bench/producers_run.py's --out")
    args = ap.parse_args()
    data = load(args.results)
    print_table(data)
    configurations(data, "Clients shared")
    print("\nLeft out:\n")
    for lib, why in producers_work.NOT_SHARED.items():
        print(f"- {lib}: {why}")
    print_targets(data)


if __name__ == "__main__":
    main()
