"""streaq in the I/O-bound workload (bench/io_run.py).

The harness's streaq adapter (`adapters.streaq_bench`): its Worker gets one
more task, "io", put in the harness's task table too, so the harness's
client (inside `async with worker`) enqueues it by kind.  Two processes,
each `Worker(concurrency=100).run_sync()` (streaq's default is 16; the
harness module reads it from BENCH_STREAQ_CONCURRENCY when imported).
"""

from __future__ import annotations

import logging
import sys

import io_work

from adapters import streaq_bench

NAME = "streaq"

VARIANTS = {"p2c100": io_work.CONCURRENCY}


@streaq_bench.worker.task()
async def io(i: int) -> None:
    await io_work.wait()


streaq_bench.TASKS[io_work.KIND] = io


def describe(variant: str) -> str:
    return (
        f"{io_work.PROCESSES} processes, each `Worker(concurrency={VARIANTS[variant]}).run_sync()` "
        "(other settings default), logging WARNING"
    )


def worker_commands(url: str, variant: str) -> list[list[str]]:
    # `-c import`, not `-m`: as __main__ the module would register "io" a second time
    start = "import streaq_io_bench; streaq_io_bench.work()"
    env = f"BENCH_STREAQ_CONCURRENCY={VARIANTS[variant]}"
    return [["env", env, sys.executable, "-c", start] for _ in range(io_work.PROCESSES)]


def work() -> None:
    """One worker process (as the harness's `python -m adapters.streaq_bench`)."""
    logging.basicConfig(level=logging.WARNING)
    streaq_bench.worker.run_sync()


Client = streaq_bench.Client  # enqueues TASKS[kind]; bulk: Worker.enqueue_many
