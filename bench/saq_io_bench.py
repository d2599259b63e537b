"""SAQ in the I/O-bound workload (bench/io_run.py).

The harness's SAQ adapter (`adapters.saq_bench`) with one more function,
`io`: its client enqueues by function name (`queue.enqueue(kind, i=arg)`),
and its worker settings are reused with `functions = [io]`.
`saq saq_io_bench.settings_c100 --workers 2`: two processes (the second
forked by the first), concurrency 100 each (SAQ's default is 10).
"""

from __future__ import annotations

import common
import io_work

from adapters import saq_bench

NAME = "saq"

VARIANTS = {"p2c100": io_work.CONCURRENCY}


async def io(ctx, *, i: int) -> None:
    await io_work.wait()


def settings_c100() -> dict:
    return {**saq_bench._settings(VARIANTS["p2c100"]), "functions": [io]}


def describe(variant: str) -> str:
    return (
        f"`saq saq_io_bench.settings_c{VARIANTS[variant]} --workers {io_work.PROCESSES}` "
        f"(concurrency={VARIANTS[variant]} per process; other settings default, logging WARNING)"
    )


def worker_commands(url: str, variant: str) -> list[list[str]]:
    settings = f"saq_io_bench.settings_c{VARIANTS[variant]}"
    return [[common.venv_bin("saq"), settings, "--workers", str(io_work.PROCESSES)]]


Client = saq_bench.Client  # queue.enqueue(kind, i=arg): kind "io" is the function's name
