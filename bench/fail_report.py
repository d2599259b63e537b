#!/usr/bin/env python
"""Tables of a failing run (bench/fail_run.py's results), like the harness's report.py.

    BENCH_PEERS_DIR=PEERS python bench/fail_report.py --results DIR [--success NOOP_DIR]

Median over repetitions with (min–max); then every failure of every
repetition, the configurations, and cogworker's rows as ratios (issue #25's
target 2): to the fastest peer's failing drain, and, given the success
workload's results of the same run (--success), to its own success drain.
"""

from __future__ import annotations

import argparse

from workload_report import agg, configurations, header, load, median, problems, procs, ratio_line


def reruns(reps: list[dict]) -> str:
    """Attempts beyond N when the last job was filed, per repetition (a retry came due)."""
    drained = [r for r in reps if r.get("drain")]
    return ", ".join(
        "?" if r["drain"]["attempts"] is None else f"{r['drain']['attempts'] - r['n']:,}"
        for r in drained
    )


def print_table(data: dict) -> None:
    header(
        "Failing jobs: time until every job is filed for retry (median, (min–max))",
        [
            "N", "reps", "failing drain jobs/s", "steady jobs/s", "start-up s",
            "worker CPU µs/job", "Redis CPU µs/job", "Redis cmds/job", "peak RSS MiB (procs)",
            "jobs run again", "problems",
        ],
    )  # fmt: skip
    for (lib, var), reps in data.items():
        print(
            f"| {lib}:{var} | {reps[0]['n']:,} | {len(reps)} | {agg(reps, 'drain.drain_rate')} "
            f"| {agg(reps, 'drain.steady_rate')} | {agg(reps, 'drain.startup_s', '{:.2f}')} "
            f"| {agg(reps, 'drain.worker_cpu_us_per_job', '{:,.0f}', False)} "
            f"| {agg(reps, 'drain.redis_cpu_us_per_job', '{:,.0f}', False)} "
            f"| {agg(reps, 'drain.redis_cmds_per_job', '{:.1f}', False)} "
            f"| {agg(reps, 'drain.peak_rss_mib', '{:.0f}')} ({procs(reps)}) "
            f"| {reruns(reps)} | {problems(reps)} |"
        )


def print_targets(data: dict, success: dict) -> None:
    peers = {
        f"{lib}:{var}": rate
        for (lib, var), reps in data.items()
        if lib != "cogworker" and (rate := median(reps, "drain.drain_rate")) is not None
    }
    print("\n### cogworker's failing drain (ratios of medians; issue #25's target 2)\n")
    for (lib, var), reps in data.items():
        if lib != "cogworker":
            continue
        ours = median(reps, "drain.drain_rate")
        print(f"- cogworker:{var}")
        print(ratio_line("failing drain", ours, peers, max, "≥ 2× the fastest"))
        # a row as of another commit (run.sh --base: "p2c10@REV") against this run's success
        own = median(success.get((lib, var.split("@")[0]), []), "drain.drain_rate")
        if ours is None or own is None:
            print("  * against its own success drain: no figure in this run")
        else:
            print(f"  * against its own success drain: {ours / own:.2f}× (target ≥ 0.5×)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True, help="bench/fail_run.py's --out")
    ap.add_argument("--success", help="the success workload's results of the same run")
    args = ap.parse_args()
    data = load(args.results)
    print_table(data)
    configurations(data)
    print_targets(data, load(args.success) if args.success else {})


if __name__ == "__main__":
    main()
