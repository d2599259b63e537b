"""The I/O-bound workload's job body (issue #19), the same for every library.

A job waits 10 ms — `await asyncio.sleep` in an async job, `time.sleep` in
a thread — then does the harness's completion `INCR` (`common.mark_done`,
the synchronous per-process client, as in the harness's own workloads: it
blocks an event loop for one round trip, and keeps the per-job Redis cost
identical across libraries).  The job is called "io" everywhere (kind,
function or task name) and takes one int.
"""

from __future__ import annotations

import asyncio
import time

import common

KIND = "io"
WAIT_SECONDS = 0.01
#: Worker processes per library: the workload's rule, so RSS per process
#: is the tree's total divided by this (supervisors and companions count).
PROCESSES = 2
#: Concurrent jobs per process for I/O-bound work: asyncio libraries run
#: this many coroutines (taskiq's default `max_async_tasks`, cogworker's
#: default `async_concurrency`), thread-based ones this many threads.
CONCURRENCY = 100


async def wait() -> None:
    """The async job: wait without blocking the loop, then count."""
    await asyncio.sleep(WAIT_SECONDS)
    common.mark_done()


def wait_blocking() -> None:
    """The thread-based job: block this thread, then count."""
    time.sleep(WAIT_SECONDS)
    common.mark_done()
