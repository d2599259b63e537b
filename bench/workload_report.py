"""What the reports of bench's own workloads share (io_report, fail_report, limit_report).

Importing this module puts the harness (BENCH_PEERS_DIR, which bench/run.sh
sets) on sys.path, for its report.load, report.agg and report.get.
"""

from __future__ import annotations

import os
import statistics
import sys

PEERS_DIR = os.environ.get("BENCH_PEERS_DIR", "")
if not os.path.isfile(os.path.join(PEERS_DIR, "report.py")):
    sys.exit("BENCH_PEERS_DIR must name the harness folder (bench/run.sh sets it)")
sys.path.insert(0, PEERS_DIR)

from report import agg, get, load  # noqa: E402  (the harness's, through the path above)

__all__ = [
    "agg", "configurations", "get", "header", "load", "median", "problems", "procs", "ratio_line",
]  # fmt: skip


def header(title: str, columns: list[str]) -> None:
    """A table's title and head: `library:config`, then `columns`."""
    print(f"### {title}\n")
    print("| " + " | ".join(["library:config", *columns]) + " |")
    print("|" + "---|" * (len(columns) + 1))


def configurations(data: dict, title: str = "Configurations") -> None:
    """Each target's configuration, as its results describe it."""
    print(f"\n### {title}\n")
    for (lib, var), reps in data.items():
        print(f"- {lib}:{var}: {reps[0]['config']}")


def procs(reps: list[dict]) -> str:
    """The worker process counts seen at the drains' peak RSS, e.g. "4" or "3/4"."""
    return "/".join(map(str, sorted({get(r, "drain.peak_nproc") for r in reps} - {None})))


def problems(reps: list[dict]) -> str:
    """Failed phases and bad drains over the repetitions (each once, with its repetitions)."""
    found: dict[str, list[str]] = {}
    for rep in reps:
        lines = [f"{phase}: {error}" for phase, error in rep.get("errors", {}).items()]
        d = rep.get("drain")
        if d and (d["timed_out"] or d["worker_died"] or d["final_count_after_stop"] != rep["n"]):
            lines.append(
                f"drain: timed out {d['timed_out']}, worker died {d['worker_died']}, "
                f"final count {d['final_count_after_stop']} of {rep['n']}"
            )
        for line in lines:
            found.setdefault(line, []).append(f"#{rep['rep']}")
    return "; ".join(f"{line} ({', '.join(at)})" for line, at in found.items()) or "none"


def median(reps: list[dict], path: str) -> float | None:
    vals = [v for v in (get(r, path) for r in reps) if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def ratio_line(what: str, ours: float | None, peers: dict[str, float], best, target: str) -> str:
    """`what`: ours ÷ the best peer's (by `best`, min or max), or why there is no ratio."""
    if ours is None or not peers:
        why = "cogworker's failed" if ours is None else "no peer's in this run"
        return f"  * {what}: no figure ({why})"
    name = best(peers, key=peers.__getitem__)
    return f"  * {what}: {ours / peers[name]:.2f}× {name}'s (target {target})"
