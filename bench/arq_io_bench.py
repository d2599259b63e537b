"""arq in the I/O-bound workload (bench/io_run.py).

The harness's arq adapter (`adapters.arq_bench`) with one more function,
`io`: its client enqueues by function name, and its worker settings are
reused with `functions = [io]`.  Two processes, each `run_worker` with
`max_jobs=100` and `poll_delay=0.05` s (the harness's best arq
configuration: with the default 0.5 s poll a worker idles between polls).
"""

from __future__ import annotations

import logging
import sys

import io_work
from arq.worker import run_worker

from adapters import arq_bench

NAME = "arq"

# variant -> (max_jobs per process, poll_delay seconds)
VARIANTS = {"p2j100poll05": (io_work.CONCURRENCY, 0.05)}


async def io(ctx, i: int) -> None:
    await io_work.wait()


def describe(variant: str) -> str:
    jobs, poll = VARIANTS[variant]
    return (
        f"{io_work.PROCESSES} processes, each `arq.worker.run_worker(WorkerSettings)` with "
        f"max_jobs={jobs}, poll_delay={poll} s; other settings default, logging WARNING"
    )


def worker_commands(url: str, variant: str) -> list[list[str]]:
    jobs, poll = VARIANTS[variant]
    start = f"import arq_io_bench; arq_io_bench.work({jobs}, {poll})"
    return [[sys.executable, "-c", start] for _ in range(io_work.PROCESSES)]


def work(max_jobs: int, poll_delay: float) -> None:
    """One worker process (as the harness's `python -m adapters.arq_bench`)."""
    logging.basicConfig(level=logging.WARNING)
    settings = arq_bench.settings_for(max_jobs, poll_delay)
    settings.functions = [io]
    run_worker(settings)


Client = arq_bench.Client  # enqueue_job(kind, arg): kind "io" is the function's name
