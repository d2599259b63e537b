"""The cost of `min_replicas`: enqueue and drain with and without WAIT, on a primary with
one replica (both Debian's redis-server on loopback, started here).

    .venv/bin/python bench/durable_writes.py [--reps 3] [--n 20000] [--singles 3000]

Each repetition runs both settings, alternating which goes first (interleaved, so a busy
machine weighs on both alike); the medians are printed as a Markdown table
(docs/production-redis.md has the figures).  Run from the repository's root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys

HERE = Path(__file__).resolve().parent


class Noop(cogworker.Job):
    """Does nothing."""

    def perform(self, number: int) -> None:
        """Nothing."""


#: The worker's config (its Redis from $COGWORKER_WORK_REDIS_URL).
config = cogworker.Config(concurrency=10, log_level="WARNING")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _servers() -> Iterator[int]:
    """A primary and its replica; the primary's port."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    directory = Path(tempfile.mkdtemp(prefix="durable-bench-"))
    primary, replica = _free_port(), _free_port()
    quiet = subprocess.DEVNULL
    common = ["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
    common += ["--repl-diskless-sync-delay", "0", "--loglevel", "warning"]
    processes = [
        subprocess.Popen([binary, "--port", str(primary), *common], cwd=directory, stdout=quiet),
        subprocess.Popen(
            [binary, "--port", str(replica), "--replicaof", "127.0.0.1", str(primary), *common],
            cwd=directory,
            stdout=quiet,
        ),
    ]
    try:
        _wait(lambda: _linked(replica), 20.0)
        yield primary
    finally:
        for process in processes:
            process.terminate()
            process.wait(10)
        shutil.rmtree(directory, ignore_errors=True)


def _linked(port: int) -> bool:
    try:
        with redis.Redis(port=port) as client:
            return client.info("replication").get("master_link_status") == "up"
    except redis.ConnectionError:
        return False


def _wait(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.01)


def _url(port: int, replicas: int) -> str:
    return f"redis://127.0.0.1:{port}/0?min_replicas={replicas}&replica_timeout=1"


def enqueue_singles(port: int, replicas: int, count: int) -> float:
    """Single enqueues a second, one after another."""
    client = cogworker.Client(cogworker.Config(redis_url=_url(port, replicas)))
    started = time.perf_counter()
    for number in range(count):
        client.enqueue(Noop, number)
    elapsed = time.perf_counter() - started
    client.close()
    return count / elapsed


def enqueue_bulk(port: int, replicas: int, count: int) -> float:
    """Jobs a second enqueued by `enqueue_many` (1,000 a round trip)."""
    client = cogworker.Client(cogworker.Config(redis_url=_url(port, replicas)))
    started = time.perf_counter()
    client.enqueue_many(Noop, [[number] for number in range(count)])
    elapsed = time.perf_counter() - started
    client.close()
    return count / elapsed


def drain(port: int, replicas: int, count: int) -> float:
    """Jobs a second drained by one worker process of 10 threads whose acks wait."""
    env = {**os.environ, "COGWORKER_WORK_REDIS_URL": _url(port, replicas)}
    command = [sys.executable, "-m", "cogworker", "work", "durable_writes:config"]
    worker = subprocess.Popen(command, cwd=HERE, env=env)
    plain = redis.Redis(port=port)
    try:
        _wait(lambda: bool(plain.scard(keys.PROCESSES)), 30.0)
        client = cogworker.Client(cogworker.Config(redis_url=_url(port, 0)))
        started = time.perf_counter()
        client.enqueue_many(Noop, [[number] for number in range(count)])
        _wait(lambda: int(plain.get(keys.stat("default", "processed")) or 0) >= count, 600.0)
        elapsed = time.perf_counter() - started
        client.close()
    finally:
        worker.terminate()
        worker.wait(30)
        plain.close()
    return count / elapsed


def main() -> None:
    """Measure, and print the medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--singles", type=int, default=3_000)
    options = parser.parse_args()
    results: dict[tuple[str, int], list[float]] = {}
    for rep in range(options.reps):
        for replicas in (0, 1) if rep % 2 == 0 else (1, 0):
            with _servers() as port:
                measured = {
                    "enqueue (one at a time)": enqueue_singles(port, replicas, options.singles),
                    "enqueue_many": enqueue_bulk(port, replicas, options.n),
                    "drain (1 process, 10 threads)": drain(port, replicas, options.n),
                }
            for name, rate in measured.items():
                results.setdefault((name, replicas), []).append(rate)
                print(f"rep {rep} min_replicas={replicas} {name}: {rate:,.0f}/s", flush=True)
    print("\n| jobs a second (median of 3) | min_replicas=0 | min_replicas=1 | cost |")
    print("|---|---|---|---|")
    for name in dict.fromkeys(name for name, _ in results):
        off, on = (statistics.median(results[name, replicas]) for replicas in (0, 1))
        print(f"| {name} | {off:,.0f} | {on:,.0f} | {1 - on / off:.0%} slower |")


if __name__ == "__main__":
    # Through its module name: a worker can import the job class from there.
    import durable_writes

    durable_writes.main()
