"""The tables of bench/cluster_bench.py: each phase's costs per topology, the cluster's ratios.

Figures are medians over the repetitions with their min–max (the harness's
`agg`); a ratio is the cluster's over the single node's within each
repetition (the two measured minutes apart, under the same load), its median
and min–max. "CPU in all" is the enqueueing process's (enqueue phases) or the
workers' (drain) CPU per job plus Redis's, summed over the primaries.
"""

from __future__ import annotations

import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from importlib.metadata import version

import workload_report  # noqa: F401  (puts the harness on sys.path)

# isort: split
from report import agg  # the harness's, through the path above

PHASES = {
    "plain": "LPUSH alone (control)",
    "single": "single enqueue",
    "bulk": "bulk enqueue",
    "drain": "drain",
}
#: The drain's figures after its first completion (start-up left out), as a phase of its own.
STEADY = "steady"
TITLES = {**PHASES, STEADY: "drain after its first job"}
#: Issue #22's target: the cluster's CPU per job at most this many times the single node's.
TARGET = 1.3
SINGLE, CLUSTER = "single node", "3-primary cluster"
#: The figures whose cluster ÷ single node ratios are shown, and their names there.
RATIOS = {
    "cpu_in_all": "CPU in all",
    "redis_cpu_us_per_job": "Redis",
    "client_or_workers_cpu": "client/workers",
    "rate": "jobs/s",
}


def run_info(args) -> dict:
    """What a reader needs to judge the run: when, how loaded, what, with which command."""
    git = ["git", "-C", os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "uptime_before": _output(["uptime"]),
        "command": shlex.join(["python", "-m", "bench.cluster_bench", *sys.argv[1:]]),
        "n": args.n,
        "reps": args.reps,
        "variant": args.variant,
        "commit": _output([*git, "rev-parse", "--short", "HEAD"]),
        "src_changed": bool(_output([*git, "status", "--porcelain", "--", "src"])),
        "machine": f"{os.cpu_count()} CPUs, {platform.release()}",
        "redis_py": version("redis"),
        "redis_server": _output(["redis-server", "--version"]).split()[2],
    }


def _output(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def client_cpu(phase: dict) -> float:
    """The enqueueing process's CPU per job, or the workers' in a drain."""
    return phase.get("client_cpu_us_per_job", phase.get("worker_cpu_us_per_job", 0.0))


def cpu_in_all(phase: dict) -> float:
    """Client (or workers) plus Redis CPU per job."""
    return client_cpu(phase) + phase["redis_cpu_us_per_job"]


def line(res: dict) -> str:
    """One repetition's figures of one topology and layout, as they come."""
    parts = [
        f"{PHASES[p]} {res[p].get('rate', res[p].get('drain_rate')):,.0f}/s "
        f"({client_cpu(res[p]):.0f}+{res[p]['redis_cpu_us_per_job']:.0f} µs)"
        for p in PHASES
    ]
    return f"  [{res['topology']}, {res['layout']} #{res['rep']}] " + ", ".join(parts)


def steady(drain: dict) -> dict:
    """The drain after its first completion, in the other phases' terms."""
    return {
        "rate": drain["steady_rate"],
        "worker_cpu_us_per_job": drain["steady_worker_cpu_us_per_job"],
        "redis_cpu_us_per_job": drain["steady_redis_cpu_us_per_job"],
    }


def report(info: dict, results: list[dict]) -> str:
    """The whole report, in Markdown."""
    for res in results:
        res[STEADY] = steady(res["drain"])
        for p in TITLES:
            res[p]["client_or_workers_cpu"] = client_cpu(res[p])
            res[p]["cpu_in_all"] = cpu_in_all(res[p])
            res[p].setdefault("rate", res[p].get("drain_rate"))
    out = [_heading(info)]
    for layout in dict.fromkeys(r["layout"] for r in results):
        of_layout = [r for r in results if r["layout"] == layout]
        out += [_phase_table(layout, of_layout), _ratios(of_layout), _by_node(info, of_layout)]
    return "\n".join(out)


def _heading(info: dict) -> str:
    rest = ", ".join(f"{t} {ms:.1f}" for t, ms in info["rest_ms_per_s"].items())
    return (
        f"## cogworker on a 3-primary Redis Cluster against a single node\n\n"
        f"{info['date']}, commit {info['commit']}"
        f"{' + changes in src/' if info['src_changed'] else ''}; `{info['command']}`\n"
        f"N = {info['n']:,} jobs a phase, {info['reps']} repetitions, workers "
        f"{info['variant']}; {info['machine']}; redis-server {info['redis_server']}, "
        f"redis-py {info['redis_py']}\n"
        f"load: `{info['uptime_before']}` before, "
        f"{' '.join(f'{x:.2f}' for x in info['load_after'])} after\n"
        f"Redis CPU at rest, ms per s summed over the primaries: {rest}\n"
    )


def _phase_table(layout: str, results: list[dict]) -> str:
    rows = [
        f"### Layout `{layout}`\n",
        "| phase | topology | jobs/s | client or workers CPU µs/job | Redis CPU µs/job "
        "| CPU in all µs/job | Redis commands/job |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase, title in TITLES.items():
        for topology in (SINGLE, CLUSTER):
            reps = [r for r in results if r["topology"] == topology]
            cells = [
                agg(reps, f"{phase}.rate"),
                agg(reps, f"{phase}.client_or_workers_cpu"),
                agg(reps, f"{phase}.redis_cpu_us_per_job"),
                agg(reps, f"{phase}.cpu_in_all"),
                agg(reps, f"{phase}.redis_cmds_per_job", "{:.2f}"),
            ]
            rows.append(f"| {title} | {topology} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def _ratios(results: list[dict]) -> str:
    """Cluster ÷ single node per repetition, for CPU in all, Redis's and the client's."""
    lines = [f"Cluster ÷ single node, per repetition (median, min–max; target ≤ {TARGET}×):\n"]
    for phase, title in TITLES.items():
        cells = []
        for what, label in RATIOS.items():
            ratios = _per_rep_ratios(results, phase, what)
            spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
            cells.append(f"{label} {statistics.median(ratios):.2f}× ({spread})")
        lines.append(f"* {title}: " + ", ".join(cells))
    return "\n".join(lines) + "\n"


def _per_rep_ratios(results: list[dict], phase: str, what: str) -> list[float]:
    by = {(r["rep"], r["topology"]): r[phase][what] for r in results}
    reps = sorted({r["rep"] for r in results})
    return [by[(rep, CLUSTER)] / by[(rep, SINGLE)] for rep in reps]


def _by_node(info: dict, results: list[dict]) -> str:
    """Each primary's Redis CPU per job of the drain (µs per job of all N)."""
    rows = [
        "| drain: Redis CPU µs per job (of all N), per primary | holds | median (min–max) |",
        "|---|---|---|",
    ]
    for topology in (SINGLE, CLUSTER):
        reps = [r for r in results if r["topology"] == topology]
        for i, label in enumerate(info["nodes"][topology]):
            values = [r["drain"]["redis_cpu_us_per_job_by_node"][i] for r in reps]
            figure = f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})"
            rows.append(f"| {topology}, primary {i + 1} | {label} | {figure} |")
    return "\n".join(rows) + "\n"
