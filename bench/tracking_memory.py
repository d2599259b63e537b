"""How much Redis memory the engine's records take after N jobs (issue #6's bounded growth).

    .venv/bin/python bench/tracking_memory.py [--jobs 100000] [--fail-every 10]

Starts a private redis-server on a free port, enqueues N status-tracked jobs
(every tenth one fails once, then succeeds on its 0 s retry), drains them with
two `cogworker work` processes, then sums MEMORY USAGE over the keys of each
kind: history, class history, attempts, statuses. Prints one table.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys

ROOT = Path(__file__).resolve().parents[1]
KINDS = {
    "history:": "run history, per job",
    "class_history:": "run history, per class",
    "attempts:": "attempts (retry timeline)",
    "status:": "statuses",
}


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A private redis-server without persistence; its process and URL."""
    binary = shutil.which("redis-server") or str(Path(sys.prefix) / "bin" / "redis-server")
    port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            redis.Redis.from_url(url).ping()
            return server, url
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


@contextlib.contextmanager
def private_redis() -> Iterator[str]:
    """A private redis-server (see `start_redis`) for the block; its URL."""
    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(Path(directory))
        try:
            yield url
        finally:
            server.terminate()


def drain(url: str, processed: int, app: str = "bench.tracking_jobs:config") -> None:
    """Two worker processes of `app` until `processed` runs have been counted."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COGWORKER_BENCH_MARKERS": tempfile.mkdtemp()}
    command = [sys.executable, "-m", "cogworker", "work", app]
    workers = [
        subprocess.Popen([*command, "--redis-url", url, "--log-level", "WARNING"], env=env)
        for _ in range(2)
    ]
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 1800
    while int(client.get(keys.stat("default", "processed")) or 0) < processed:
        if time.monotonic() > deadline:
            raise SystemExit("the drain did not finish in 30 minutes")
        time.sleep(0.5)
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        worker.wait(60)


def _untagged(name: str) -> str:
    """`name` without its leading hash tag (`{q:QUEUE}:class_history:C` -> `class_history:C`)."""
    if name.startswith("{") and "}:" in name:
        return name.split("}:", 1)[1]
    return name


def usage(url: str, kinds: Mapping[str, str] = KINDS) -> dict[str, tuple[int, int]]:
    """Per kind of key (its name's start after the prefix): (number of keys, bytes of
    MEMORY USAGE)."""
    client = redis.Redis.from_url(url)
    found: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for key in client.scan_iter(match=keys.PREFIX + "*", count=5000):
        name = _untagged(key.decode()[len(keys.PREFIX) :])
        kind = next((k for k in kinds if name.startswith(k)), None)
        if kind:
            found[kind][0] += 1
            found[kind][1] += int(client.memory_usage(key) or 0)
    return {kind: (count, size) for kind, (count, size) in found.items()}


def main() -> None:
    """Enqueue, drain, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100_000)
    total = parser.parse_args().jobs
    with private_redis() as url:
        sys.path.insert(0, str(ROOT))
        from bench.tracking_jobs import Flaky, Tracked

        client = cogworker.Client(cogworker.Config(redis_url=url))
        client.enqueue_many(Tracked, [[n] for n in range(total - total // 10)])
        client.enqueue_many(Flaky, [[n] for n in range(total // 10)])
        started = time.monotonic()
        drain(url, total + total // 10)
        figures = usage(url)
        info = redis.Redis.from_url(url).info("memory")
    took = time.monotonic() - started
    print(f"{total:,} jobs ({total // 10:,} failed once), drained in {took:.0f} s")
    print("| records | keys | MiB | bytes per key |\n|---|---|---|---|")
    for kind, label in KINDS.items():
        count, size = figures.get(kind, (0, 0))
        print(f"| {label} | {count:,} | {size / 2**20:.1f} | {size // max(count, 1)} |")
    print(f"| Redis used_memory in total | | {info['used_memory'] / 2**20:.1f} | |")


if __name__ == "__main__":
    main()
