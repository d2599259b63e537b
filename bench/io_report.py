#!/usr/bin/env python
"""Tables of an I/O-bound run (bench/io_run.py's results), like the harness's report.py.

    BENCH_PEERS_DIR=PEERS python bench/io_report.py --results DIR

Median over repetitions with (min–max), from the harness's report.load and
report.agg; then every failure of every repetition, the configurations, and
cogworker's rows as ratios to the peers (the targets of issue #19).
"""

from __future__ import annotations

import argparse

from workload_report import agg, configurations, header, load, median, problems, procs, ratio_line

#: Peers whose enqueue the client workload compares cogworker's AsyncClient with.
CLIENT_PEERS = ("arq", "saq")


def add_memory_per_process(reps: list[dict]) -> None:
    """The whole tree's memory over the worker processes asked for (helpers counted):
    PSS at the drain's end (what a worker costs the machine: the figure compared, see
    docs/benchmarks.md) and peak RSS (pages shared between processes counted in each)."""
    for rep in reps:
        drain = rep.get("drain")
        if drain:
            drain["rss_per_process_mib"] = drain["peak_rss_mib"] / rep["worker_processes"]
            if drain.get("pss_at_end_mib"):
                drain["pss_per_process_mib"] = drain["pss_at_end_mib"] / rep["worker_processes"]


def print_table(data: dict) -> None:
    header(
        "I/O-bound jobs (median of repetitions, (min–max))",
        [
            "N", "reps", "drain jobs/s", "steady jobs/s", "worker CPU µs/job",
            "PSS MiB per process", "RSS MiB per process (procs in all)", "Redis cmds/job",
            "enqueue/s from 100 tasks", "client CPU µs/enqueue", "problems",
        ],
    )  # fmt: skip
    for (lib, var), reps in data.items():
        print(
            f"| {lib}:{var} | {reps[0]['n']:,} | {len(reps)} | {agg(reps, 'drain.drain_rate')} "
            f"| {agg(reps, 'drain.steady_rate')} "
            f"| {agg(reps, 'drain.worker_cpu_us_per_job')} "
            f"| {agg(reps, 'drain.pss_per_process_mib', '{:.1f}')} "
            f"| {agg(reps, 'drain.rss_per_process_mib', '{:.1f}')} ({procs(reps)}) "
            f"| {agg(reps, 'drain.redis_cmds_per_job', '{:.1f}', False)} "
            f"| {agg(reps, 'enqueue_tasks_rate')} "
            f"| {agg(reps, 'enqueue_cpu_us_per_job', '{:,.0f}', False)} | {problems(reps)} |"
        )


def print_targets(data: dict) -> None:
    peers = {f"{lib}:{var}": reps for (lib, var), reps in data.items() if lib != "cogworker"}

    def of(path: str, names=None) -> dict[str, float]:
        got = {n: median(reps, path) for n, reps in peers.items()}
        return {n: v for n, v in got.items() if v is not None and (names is None or n in names)}

    client_peers = [n for n in peers if n.split(":")[0] in CLIENT_PEERS]
    print("\n### cogworker against the peers (ratios of medians; issue #19's targets)\n")
    for (lib, var), reps in data.items():
        if lib != "cogworker":
            continue
        print(f"- cogworker:{var}")
        drain, cpu = median(reps, "drain.drain_rate"), median(reps, "drain.worker_cpu_us_per_job")
        pss = median(reps, "drain.pss_per_process_mib")
        rss = median(reps, "drain.rss_per_process_mib")
        enqueue = median(reps, "enqueue_tasks_rate")
        print(ratio_line("drain", drain, of("drain.drain_rate"), max, "≥ 1.5× the fastest"))
        print(ratio_line("CPU/job", cpu, of("drain.worker_cpu_us_per_job"), min, "≤ 1×"))
        print(ratio_line("PSS/process", pss, of("drain.pss_per_process_mib"), min, "≤ 1.2×"))
        print(ratio_line("RSS/process", rss, of("drain.rss_per_process_mib"), min, "(beside)"))
        print(
            ratio_line(
                "enqueue", enqueue, of("enqueue_tasks_rate", client_peers), max, "≥ 1× arq, SAQ"
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True, help="bench/io_run.py's --out")
    args = ap.parse_args()
    data = load(args.results)
    for reps in data.values():
        add_memory_per_process(reps)
    print_table(data)
    configurations(data)
    print_targets(data)


if __name__ == "__main__":
    main()
