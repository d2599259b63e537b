"""taskiq in the I/O-bound workload (bench/io_run.py).

The harness's taskiq adapter (`adapters.taskiq_bench`): its stream broker
(RedisStreamBroker, the acknowledging one) gets one more task, "io", put in
the harness's task table too, so the harness's client sends it by kind.
`taskiq worker taskiq_io_bench:stream_broker --workers 2 --max-async-tasks 100`
(100 is taskiq's default, named here so the figure doesn't move with it).
"""

from __future__ import annotations

import common
import io_work

from adapters import taskiq_bench

NAME = "taskiq"

VARIANTS = {"stream": "stream_broker"}

stream_broker = taskiq_bench.stream_broker  # what the worker command names


async def io(i: int) -> None:
    await io_work.wait()


taskiq_bench.TASKS["stream"][io_work.KIND] = stream_broker.register_task(io, task_name=io_work.KIND)


def describe(variant: str) -> str:
    return (
        f"`taskiq worker taskiq_io_bench:{VARIANTS[variant]} --workers {io_work.PROCESSES} "
        f"--max-async-tasks {io_work.CONCURRENCY} --log-level WARNING` (RedisStreamBroker; "
        "ack when_saved, no result backend)"
    )


def worker_commands(url: str, variant: str) -> list[list[str]]:
    return [
        [
            common.venv_bin("taskiq"), "worker", f"taskiq_io_bench:{VARIANTS[variant]}",
            "--workers", str(io_work.PROCESSES),
            "--max-async-tasks", str(io_work.CONCURRENCY),
            "--log-level", "WARNING",
        ]
    ]  # fmt: skip


Client = taskiq_bench.Client  # sends TASKS[variant][kind]
