#!/usr/bin/env python
"""Tables of an I/O-bound run (bench/io_run.py's results), like the harness's report.py.

    BENCH_PEERS_DIR=PEERS python bench/io_report.py --results DIR

Median over repetitions with (min–max), from the harness's report.load and
report.agg; then every failure of every repetition, the configurations, and
cogworker's rows as ratios to the peers (the targets of issue #19).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

PEERS_DIR = os.environ.get("BENCH_PEERS_DIR", "")
if not os.path.isfile(os.path.join(PEERS_DIR, "report.py")):
    sys.exit("io_report.py: BENCH_PEERS_DIR must name the harness folder (bench/run.sh sets it)")
sys.path.insert(0, PEERS_DIR)

from report import agg, get, load  # noqa: E402  (the harness's, through the path above)

#: Peers whose enqueue the client workload compares cogworker's AsyncClient with.
CLIENT_PEERS = ("arq", "saq")


def add_rss_per_process(reps: list[dict]) -> None:
    """Peak RSS of the whole tree over the worker processes asked for (helpers counted)."""
    for rep in reps:
        if rep.get("drain"):
            rep["drain"]["rss_per_process_mib"] = (
                rep["drain"]["peak_rss_mib"] / rep["worker_processes"]
            )


def problems(reps: list[dict]) -> str:
    """Failed phases and bad drains over the repetitions (each once, with its repetitions)."""
    found: dict[str, list[str]] = {}
    for rep in reps:
        lines = [f"{phase}: {error}" for phase, error in rep["errors"].items()]
        d = rep.get("drain")
        if d and (d["timed_out"] or d["worker_died"] or d["final_count_after_stop"] != rep["n"]):
            lines.append(
                f"drain: timed out {d['timed_out']}, worker died {d['worker_died']}, "
                f"final count {d['final_count_after_stop']} of {rep['n']}"
            )
        for line in lines:
            found.setdefault(line, []).append(f"#{rep['rep']}")
    return "; ".join(f"{line} ({', '.join(at)})" for line, at in found.items()) or "none"


def print_table(data: dict) -> None:
    print("### I/O-bound jobs (median of repetitions, (min–max))\n")
    print(
        "| library:config | N | reps | drain jobs/s | steady jobs/s | worker CPU µs/job "
        "| RSS MiB per process (procs in all) | Redis cmds/job | enqueue/s from 100 tasks "
        "| client CPU µs/enqueue | problems |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (lib, var), reps in data.items():
        procs = sorted({get(r, "drain.peak_nproc") for r in reps} - {None})
        print(
            f"| {lib}:{var} | {reps[0]['n']:,} | {len(reps)} | {agg(reps, 'drain.drain_rate')} "
            f"| {agg(reps, 'drain.steady_rate')} "
            f"| {agg(reps, 'drain.worker_cpu_us_per_job')} "
            f"| {agg(reps, 'drain.rss_per_process_mib', '{:.0f}')} ({'/'.join(map(str, procs))}) "
            f"| {agg(reps, 'drain.redis_cmds_per_job', '{:.1f}', False)} "
            f"| {agg(reps, 'enqueue_tasks_rate')} "
            f"| {agg(reps, 'enqueue_cpu_us_per_job', '{:,.0f}', False)} | {problems(reps)} |"
        )


def median(reps: list[dict], path: str) -> float | None:
    vals = [v for v in (get(r, path) for r in reps) if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def ratio_line(what: str, ours: float | None, peers: dict[str, float], best, target: str) -> str:
    """`what`: ours ÷ the best peer's (by `best`, min or max), or why there is no ratio."""
    if ours is None or not peers:
        return f"  * {what}: no figure ({'cogworker' if ours is None else 'peers'} failed)"
    name = best(peers, key=peers.__getitem__)
    return f"  * {what}: {ours / peers[name]:.2f}× {name}'s (target {target})"


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
        rss, enqueue = median(reps, "drain.rss_per_process_mib"), median(reps, "enqueue_tasks_rate")
        print(ratio_line("drain", drain, of("drain.drain_rate"), max, "≥ 1.5× the fastest"))
        print(ratio_line("CPU/job", cpu, of("drain.worker_cpu_us_per_job"), min, "≤ 1×"))
        print(ratio_line("RSS/process", rss, of("drain.rss_per_process_mib"), min, "≤ 1.2×"))
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
        add_rss_per_process(reps)
    print_table(data)
    print("\n### Configurations\n")
    for (lib, var), reps in data.items():
        print(f"- {lib}:{var}: {reps[0]['config']}")
    print_targets(data)


if __name__ == "__main__":
    main()
