"""Does a worker's memory stay flat over a long run?  (issue #8: no growth per job)

    .venv/bin/python bench/worker_rss.py [--jobs 200000] [--concurrency 10] [--prefetch 0]
                                         [--track]

Starts a private redis-server on a free port, enqueues N no-op jobs with the
bulk API, drains them with ONE `cogworker work` process and samples its RSS
(as the heartbeat reads it) and the processed counter every 0.25 s.  Prints
the RSS at each tenth of the run and the least-squares slope of RSS against jobs
done after the first tenth (warm-up: caches, allocator arenas, connections),
then what the worker's whole process tree (the worker and its pulse) holds
at the end of the drain: RSS and PSS, each process's and their sum (PSS is
the figure compared with other libraries: docs/benchmarks.md, "How a
worker's memory is compared").
`--track` turns status tracking on, so every job also writes a status and
its own history.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_memory import rss_kib

ROOT = Path(__file__).resolve().parents[1]
QUEUE = "rss"
SAMPLE_EVERY = 0.25


class Noop(cogworker.Job, queue=QUEUE):
    """Does nothing."""

    def perform(self, number: int) -> None:
        """Nothing."""


def smaps_kib(pid: int) -> dict[str, int]:
    """The KiB figures of /proc/PID/smaps_rollup (Rss, Pss, Private_Dirty...)."""
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        fields = (line.split() for line in rollup if line.rstrip().endswith(" kB"))
        return {field[0].rstrip(":"): int(field[1]) for field in fields}


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            children = [int(child) for child in listing.read().split()]
    except OSError:
        return [pid]
    return [pid, *(descendant for child in children for descendant in process_tree(child))]


def tree_memory(pid: int) -> list[tuple[str, int, int]]:
    """(command, RSS KiB, PSS KiB) of each process of `pid`'s tree."""
    rows = []
    for member in process_tree(pid):
        try:
            with open(f"/proc/{member}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
            figures = smaps_kib(member)
        except OSError:
            continue  # gone in between
        rows.append((command, figures["Rss"], figures["Pss"]))
    return rows


def sample(
    url: str, total: int, command: list[str]
) -> tuple[list[tuple[int, int]], list[tuple[str, int, int]]]:
    """(jobs processed, RSS KiB) every SAMPLE_EVERY s, from the worker's start to the last job;
    and the worker's tree's memory after the last job."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen([*command, "--redis-url", url, "--log-level", "WARNING"], env=env)
    client = redis.Redis.from_url(url)
    samples: list[tuple[int, int]] = []
    deadline = time.monotonic() + 1800
    try:
        while not samples or samples[-1][0] < total:
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("the worker stopped, or the drain took over 30 minutes")
            processed = int(client.get(keys.stat(QUEUE, "processed")) or 0)
            rss = rss_kib(worker.pid)
            if rss is not None:
                samples.append((processed, rss))
            time.sleep(SAMPLE_EVERY)
        tree = tree_memory(worker.pid)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    return samples, tree


def slope_kib_per_10k(points: list[tuple[int, int]]) -> float:
    """Least-squares slope of RSS (KiB) against jobs done, per 10,000 jobs."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return 0.0
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return covariance / spread * 10_000


def report(
    samples: list[tuple[int, int]], tree: list[tuple[str, int, int]], total: int, took: float
) -> None:
    """Print the RSS at each tenth of the run, the slope after warm-up and the tree's memory."""
    print(f"{total:,} jobs drained by one worker process in {took:.1f} s")
    print("| jobs done | RSS MiB |\n|---|---|")
    for tenth in range(1, 11):
        done, kib = next(s for s in samples if s[0] >= total * tenth // 10)
        print(f"| {done:,} | {kib / 1024:.1f} |")
    after_warm_up = [s for s in samples if s[0] >= total // 10]
    peak = max(kib for _, kib in samples)
    print(f"peak RSS {peak / 1024:.1f} MiB; slope after the first tenth: ", end="")
    print(f"{slope_kib_per_10k(after_warm_up):+.1f} KiB per 10,000 jobs")
    print("\nthe worker's process tree after the last job:\n")
    print("| process | RSS MiB | PSS MiB |\n|---|---|---|")
    for command, rss, pss in tree:
        print(f"| `{command[:60]}` | {rss / 1024:.1f} | {pss / 1024:.1f} |")
    rss_sum, pss_sum = sum(row[1] for row in tree), sum(row[2] for row in tree)
    print(f"| **the tree** | {rss_sum / 1024:.1f} | **{pss_sum / 1024:.1f}** |")


def main() -> None:
    """Enqueue, drain while sampling, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=200_000)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--prefetch", type=int, default=0)
    parser.add_argument("--track", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.tracking_memory import start_redis
    from bench.worker_rss import Noop as NoopJob  # by its importable name, not __main__'s

    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(Path(directory))
        try:
            config = cogworker.Config(redis_url=url, queues=(QUEUE,), track_status=args.track)
            cogworker.Client(config).enqueue_many(NoopJob, [[n] for n in range(args.jobs)])
            command = [sys.executable, "-m", "cogworker", "work", "bench.worker_rss"]
            os.environ["COGWORKER_RSS_SETTINGS"] = (
                f"{args.concurrency},{args.prefetch},{int(args.track)}"
            )
            started = time.monotonic()
            samples, tree = sample(url, args.jobs, command)
        finally:
            server.terminate()
    report(samples, tree, args.jobs, time.monotonic() - started)


def _config_from_environment() -> cogworker.Config:
    # The worker process imports this module for its `config`: the flags
    # reach it through the environment.
    settings = os.environ.get("COGWORKER_RSS_SETTINGS", "10,0,0")
    concurrency, prefetch, track = (int(part) for part in settings.split(","))
    return cogworker.Config(
        concurrency=concurrency, prefetch=prefetch, queues=(QUEUE,), track_status=bool(track)
    )


config = _config_from_environment()

if __name__ == "__main__":
    main()
