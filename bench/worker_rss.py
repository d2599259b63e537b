"""Does a worker's memory stay flat over a long run?  (issue #8: no growth per job)

    .venv/bin/python bench/worker_rss.py [--jobs 200000] [--concurrency 10] [--prefetch 0]
                                         [--track]

Starts a private redis-server on a free port, enqueues N no-op jobs with the
bulk API, drains them with ONE `cogworker work` process and samples its RSS
(as the heartbeat reads it) and the processed counter every 0.25 s.  Prints
the RSS at each tenth of the run and the least-squares slope of RSS against jobs
done after the first tenth (warm-up: caches, allocator arenas, connections).
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


def sample(url: str, total: int, command: list[str]) -> list[tuple[int, int]]:
    """(jobs processed, RSS KiB) every SAMPLE_EVERY s, from the worker's start to the last job."""
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
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(60)
    return samples


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


def report(samples: list[tuple[int, int]], total: int, took: float) -> None:
    """Print the RSS at each tenth of the run and the slope after warm-up."""
    print(f"{total:,} jobs drained by one worker process in {took:.1f} s")
    print("| jobs done | RSS MiB |\n|---|---|")
    for tenth in range(1, 11):
        done, kib = next(s for s in samples if s[0] >= total * tenth // 10)
        print(f"| {done:,} | {kib / 1024:.1f} |")
    after_warm_up = [s for s in samples if s[0] >= total // 10]
    peak = max(kib for _, kib in samples)
    print(f"peak RSS {peak / 1024:.1f} MiB; slope after the first tenth: ", end="")
    print(f"{slope_kib_per_10k(after_warm_up):+.1f} KiB per 10,000 jobs")


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
            samples = sample(url, args.jobs, command)
        finally:
            server.terminate()
    report(samples, args.jobs, time.monotonic() - started)


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
