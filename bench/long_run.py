"""A long run: do the workers slow down, grow, or leave Redis holding more?  (issue #25, target 6)

    .venv/bin/python -m bench.long_run [--jobs 1000000] [--segment 100000] [--ttl 30]

Starts a private redis-server on a free port and TWO `cogworker work` processes with
`Config()` defaults (10 threads, no prefetch, history and per-class metrics on), except
that what jobs leave behind expires after `--ttl` seconds instead of days (`history_ttl`,
`status_expiry`, `metrics_retention`): the retention of a real deployment, simulated.
No-op jobs are fed with the bulk API as the workers drain them, the queue kept at about
50,000 (Redis holds a busy queue's jobs, not a million at once). Every SAMPLE_EVERY s
it reads the processed counter, each worker's RSS and Redis's `used_memory`, and prints,
per segment of `--segment` jobs: the drain rate, each worker's RSS and Redis's memory at
its end, and the load average; then each worker's RSS slope per 100,000 jobs after the
first segment (warm-up), the first and last segments' rates, the workers' CPU per job,
and Redis's memory before the run and once the TTLs have passed after the workers
stopped, with every key left then.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs
import psutil
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_memory import rss_kib

ROOT = Path(__file__).resolve().parents[1]
QUEUE = "longrun"
WORKERS = 2
SAMPLE_EVERY = 0.25
#: Jobs enqueued in one `enqueue_many` call, and the queue's low-water mark in calls.
FEED, FEED_LOW = 1000, 50
TTL_ENVIRONMENT = "COGWORKER_LONGRUN_TTL"


class Noop(cogworker.Job, queue=QUEUE):
    """Does nothing."""

    def perform(self, number: int) -> None:
        """Nothing."""


@attrs.frozen
class Sample:
    """What was read at one moment of the run."""

    at: float
    processed: int
    rss_kib: tuple[int, ...]
    redis_bytes: int
    load: float


def retention_config() -> cogworker.Config:
    """`Config()` defaults, but the run's leftovers expire after the TTL in the environment."""
    ttl = float(os.environ.get(TTL_ENVIRONMENT, "30"))
    return cogworker.Config(
        queues=(QUEUE,), history_ttl=ttl, status_expiry=ttl, metrics_retention=ttl
    )


def start_workers(url: str) -> list[subprocess.Popen[bytes]]:
    """WORKERS `cogworker work bench.long_run` processes, this checkout first on their path."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "cogworker", "work", "bench.long_run", "--redis-url", url]
    env = {**os.environ, "PYTHONPATH": path}
    return [subprocess.Popen([*command, "--log-level", "WARNING"], env=env) for _ in range(WORKERS)]


def feed(client: cogworker.Client, r: redis.Redis, enqueued: int, total: int) -> int:
    """Ten more batches when the queue is below FEED_LOW of them (a few at a time, so
    sampling goes on meanwhile); the jobs enqueued so far."""
    if r.llen(keys.queue(QUEUE)) >= FEED_LOW * FEED:
        return enqueued
    for _ in range(10):
        batch = min(FEED, total - enqueued)
        if batch <= 0:
            break
        client.enqueue_many(Noop, [[n] for n in range(enqueued, enqueued + batch)])
        enqueued += batch
    return enqueued


def drain(url: str, total: int) -> tuple[list[Sample], float]:
    """Feed and sample until every job ran; the samples and the workers' CPU µs per job."""
    r = redis.Redis.from_url(url)
    client = cogworker.Client(attrs.evolve(retention_config(), redis_url=url))
    enqueued = feed(client, r, 0, total)
    workers = start_workers(url)
    samples: list[Sample] = []
    deadline = time.monotonic() + 3600
    try:
        while not samples or samples[-1].processed < total:
            if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
                raise SystemExit("a worker stopped, or the run took over an hour")
            enqueued = feed(client, r, enqueued, total)
            samples.append(read(r, workers))
            time.sleep(SAMPLE_EVERY)
        cpu = sum(sum(psutil.Process(w.pid).cpu_times()[:2]) for w in workers)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait(60)
        client.close()
    return samples, cpu / total * 1e6


def read(r: redis.Redis, workers: list[subprocess.Popen[bytes]]) -> Sample:
    """The processed counter, each worker's RSS, Redis's memory and the load, now."""
    return Sample(
        at=time.monotonic(),
        processed=int(r.get(keys.stat(QUEUE, "processed")) or 0),
        rss_kib=tuple(rss_kib(w.pid) or 0 for w in workers),
        redis_bytes=used_memory(r),
        load=os.getloadavg()[0],
    )


def used_memory(r: redis.Redis) -> int:
    """Redis's `used_memory` (bytes its allocator holds for data, clients and itself)."""
    return int(r.info("memory")["used_memory"])


def crossing(samples: list[Sample], jobs: int) -> Sample:
    """The first sample at or past `jobs` done."""
    return next(s for s in samples if s.processed >= jobs)


def time_at(samples: list[Sample], jobs: int) -> float:
    """When `jobs` were done, interpolated between the samples around it."""
    after = samples.index(crossing(samples, jobs))
    if after == 0:
        return samples[0].at
    before = samples[after - 1]
    done = samples[after].processed - before.processed
    return before.at + (samples[after].at - before.at) * (jobs - before.processed) / done


def segment_ends(total: int, segment: int) -> list[int]:
    """The jobs done at the end of each segment."""
    return list(range(segment, total + 1, segment))


def segment_rates(samples: list[Sample], total: int, segment: int) -> list[float]:
    """Jobs/s of each segment; the first from the first job done (start-up left out)."""
    first = next(s for s in samples if s.processed > 0).processed
    marks = [(n, time_at(samples, n)) for n in [first, *segment_ends(total, segment)]]
    return [(b - a) / (t1 - t0) for (a, t0), (b, t1) in itertools.pairwise(marks)]


def print_run(samples: list[Sample], total: int, segment: int, cpu_us: float) -> None:
    """The per-segment table, the RSS slopes and the rates of the first and last segments."""
    from bench.worker_rss import slope_kib_per_10k

    rates = segment_rates(samples, total, segment)
    print("| jobs done | jobs/s in the segment | worker RSS MiB | Redis used MiB | load 1 min |")
    print("|---|---|---|---|---|")
    for n, rate in zip(segment_ends(total, segment), rates, strict=True):
        s = crossing(samples, n)
        rss = " / ".join(f"{kib / 1024:.1f}" for kib in s.rss_kib)
        print(f"| {n:,} | {rate:,.0f} | {rss} | {s.redis_bytes / 2**20:.1f} | {s.load:.2f} |")
    warm = [s for s in samples if s.processed >= segment]
    for i in range(WORKERS):
        slope = slope_kib_per_10k([(s.processed, s.rss_kib[i]) for s in warm]) * 10
        print(f"worker {i + 1}: RSS after the first segment {slope:+.1f} KiB per 100,000 jobs")
    print(f"first segment {rates[0]:,.0f} jobs/s, last {rates[-1]:,.0f}: ", end="")
    print(f"last/first {rates[-1] / rates[0]:.3f}; worker CPU {cpu_us:.0f} µs/job (both processes)")


#: `INFO memory` fields compared before and after: all, the keys' data, the Lua scripts
#: loaded (cache and VM) and the clients' buffers.
MEMORY_PARTS = (
    "used_memory", "used_memory_dataset", "used_memory_scripts_eval", "used_memory_vm_eval",
    "mem_clients_normal",
)  # fmt: skip


def print_leftovers(url: str, before: dict[str, int], peak: int, ttl: float) -> None:
    """Redis's memory once the TTLs passed, against its baseline, and every key left."""
    r = redis.Redis.from_url(url, decode_responses=True)
    after = memory_parts(r)
    print(f"\nRedis used_memory peak during the run {peak / 2**20:.1f} MiB; ", end="")
    print(f"before the run and {ttl:.0f} s after the workers stopped (bytes):")
    print("| INFO memory | before | after | after - before |\n|---|---|---|---|")
    for part in MEMORY_PARTS:
        print(f"| {part} | {before[part]:,} | {after[part]:,} | {after[part] - before[part]:+,} |")
    # Not the data: Redis 7 keeps a latency histogram per command ever called (about 27 KB
    # each, `latency-tracking`), and its slow log up to 128 commands with 32 arguments each.
    entries = r.slowlog_len()
    r.slowlog_reset()
    r.config_resetstat()
    cleared = memory_parts(r)["used_memory"] - before["used_memory"]
    print(
        f"\nAfter SLOWLOG RESET ({entries} commands) and CONFIG RESETSTAT (the per-command ", end=""
    )
    print(f"latency histograms), used_memory - before: {cleared:+,} bytes")
    print(f"\n{r.dbsize()} keys left:\n| key | type | TTL s | bytes |\n|---|---|---|---|")
    for key in sorted(r.scan_iter(count=1000)):
        kind = r.type(key)
        print(f"| `{key}` | {kind!s} | {r.ttl(key)} | {r.memory_usage(key)} |")


def memory_parts(r: redis.Redis) -> dict[str, int]:
    """The MEMORY_PARTS of `INFO memory`, now."""
    info = r.info("memory")
    return {part: int(info.get(part, 0)) for part in MEMORY_PARTS}


def main() -> None:
    """Start Redis, run, wait out the TTLs, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--segment", type=int, help="jobs per segment; default: a tenth")
    parser.add_argument("--ttl", type=float, default=30.0, help="history, status, metrics TTL")
    args = parser.parse_args()
    segment = args.segment or args.jobs // 10
    os.environ[TTL_ENVIRONMENT] = str(args.ttl)
    from bench.tracking_memory import start_redis

    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(Path(directory))
        try:
            r = redis.Redis.from_url(url)
            before = memory_parts(r)
            print(f"{args.jobs:,} jobs, {WORKERS} worker processes; load {os.getloadavg()}")
            started = time.monotonic()
            # The importable module's: its job class is `bench.long_run.Noop`, not `__main__`'s.
            samples, cpu_us = importlib.import_module("bench.long_run").drain(url, args.jobs)
            took = time.monotonic() - started
            print(f"drained in {took:.1f} s, {args.jobs / took:,.0f} jobs/s overall\n")
            print_run(samples, args.jobs, segment, cpu_us)
            time.sleep(args.ttl + 2)  # the TTLs, and Redis's active expiry cycle after them
            print_leftovers(url, before, max(s.redis_bytes for s in samples), args.ttl)
            print(f"load average at the end {os.getloadavg()}")
        finally:
            server.terminate()


config = retention_config()  # for `cogworker work bench.long_run`

if __name__ == "__main__":
    main()
