"""How much Redis memory a kept result takes (issue #24): the record and its jid index.

    .venv/bin/python -m bench.results_memory [--jobs 20000]

Starts a private redis-server on a free port, enqueues N jobs keeping a small
result (`{"n":123,"ok":true}`, see results_jobs.py), drains them with one
`cogworker work` process, then sums MEMORY USAGE over the result records and
the jid index entries, and prints them with Redis's `used_memory` before the
enqueue and after the drain.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

import cogworker
from bench.tracking_memory import ROOT, start_redis
from cogworker.adapters import redis_keys as keys

KINDS = {":result:": "result records", "jid:": "jid index entries"}


def drain(url: str, total: int) -> None:
    """One worker process until every job has been processed."""
    command = [sys.executable, "-m", "cogworker", "work", "bench.results_jobs:config"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen([*command, "--redis-url", url, "--log-level", "WARNING"], env=env)
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 1800
    while int(client.get(keys.stat("processed")) or 0) < total:
        if time.monotonic() > deadline:
            raise SystemExit("the drain did not finish in 30 minutes")
        time.sleep(0.5)
    worker.send_signal(signal.SIGTERM)
    worker.wait(60)


def usage(url: str) -> dict[str, tuple[int, int]]:
    """Per kind of key: (number of keys, bytes of MEMORY USAGE)."""
    client = redis.Redis.from_url(url)
    found: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for key in client.scan_iter(match=keys.PREFIX + "*", count=5000):
        kind = next((k for k in KINDS if k in key.decode()), None)
        if kind:
            found[kind][0] += 1
            found[kind][1] += int(client.memory_usage(key, samples=0) or 0)
    return {kind: (count, size) for kind, (count, size) in found.items()}


def main() -> None:
    """Enqueue, drain, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=20_000)
    total = parser.parse_args().jobs
    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(Path(directory))
        try:
            sys.path.insert(0, str(ROOT))
            from bench.results_jobs import Kept

            before = redis.Redis.from_url(url).info("memory")["used_memory"]
            cogworker.Client(cogworker.Config(redis_url=url)).enqueue_many(
                Kept, [[n] for n in range(total)]
            )
            drain(url, total)
            figures = usage(url)
            after = redis.Redis.from_url(url).info("memory")["used_memory"]
        finally:
            server.terminate()
    print(f"{total:,} jobs keeping a small result, drained")
    print("| records | keys | bytes per key |\n|---|---|---|")
    for kind, label in KINDS.items():
        count, size = figures.get(kind, (0, 0))
        print(f"| {label} | {count:,} | {size // max(count, 1)} |")
    print(f"| Redis used_memory, after minus before, per job | | {(after - before) // total} |")


if __name__ == "__main__":
    main()
