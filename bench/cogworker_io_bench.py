"""cogworker in the I/O-bound workload (bench/io_run.py): async jobs, and sync jobs in threads.

Workers: 2 × `cogworker work cogworker_io_bench:config_<variant>` (started
as cogworker_bench starts them), other settings default:

* `p2a…` variants run `IoWait`, an `async def perform`, on each process's
  event loop, `Config.async_concurrency` at once (default 100), handed over
  by the fetcher a fetch at a time (up to `concurrency + prefetch` of them
  waiting there for a place);
* `p2t…` variants run `IoWaitBlocking`, a plain `def perform` that blocks
  in `time.sleep`, for comparison: as many processor threads as the async
  libraries run coroutines.

Client: `cogworker.AsyncClient(config)`, `await client.enqueue(Job, i)` (the
client workload, from 100 concurrent tasks: bench/io_run.py).  The drain's
jobs are queued with the sync `Client.enqueue_many` (`FillClient`): the
payload is the same, and the drain doesn't depend on the AsyncClient.
"""

from __future__ import annotations

import common
import io_work
from cogworker_bench import Client as SyncClient
from cogworker_bench import worker_command

import cogworker

NAME = "cogworker"
QUEUE = "bench-io"


class IoWait(cogworker.Job, queue=QUEUE):
    async def perform(self, i: int) -> None:
        await io_work.wait()


class IoWaitBlocking(cogworker.Job, queue=QUEUE):
    def perform(self, i: int) -> None:
        io_work.wait_blocking()


# variant -> (job class, processor threads, prefetch) per process; every
# variant has Config's default async_concurrency, 100 (io_work.CONCURRENCY)
VARIANTS: dict[str, tuple[type[cogworker.Job], int, int]] = {
    "p2a100": (IoWait, 10, 0),  # Config defaults
    "p2a100pf100": (IoWait, 10, io_work.CONCURRENCY),
    "p2t100": (IoWaitBlocking, io_work.CONCURRENCY, 0),
    "p2t100pf100": (IoWaitBlocking, io_work.CONCURRENCY, io_work.CONCURRENCY),
}


def _config(variant: str, url: str | None = None) -> cogworker.Config:
    _, threads, prefetch = VARIANTS[variant]
    return cogworker.Config(
        redis_url=url or common.redis_url(),
        concurrency=threads,
        async_concurrency=io_work.CONCURRENCY,
        prefetch=prefetch,
        queues=(QUEUE,),
        log_level="WARNING",
    )


def _attr(variant: str) -> str:
    return f"config_{variant}"


# One module attribute per variant, for `cogworker work cogworker_io_bench:config_<variant>`.
for _variant in VARIANTS:
    globals()[_attr(_variant)] = _config(_variant)


def describe(variant: str) -> str:
    job, threads, prefetch = VARIANTS[variant]
    perform = "async def perform" if job is IoWait else "def perform, time.sleep"
    return (
        f"{io_work.PROCESSES} x `cogworker work cogworker_io_bench:{_attr(variant)}` "
        f"(Config(concurrency={threads}, async_concurrency={io_work.CONCURRENCY}, "
        f"prefetch={prefetch}, queues=('{QUEUE}',), log_level='WARNING'), other settings "
        f"default); job `{job.__name__}` ({perform})"
    )


def worker_commands(url: str, variant: str) -> list[list[str]]:
    app = f"cogworker_io_bench:{_attr(variant)}"
    return [worker_command(app, url) for _ in range(io_work.PROCESSES)]


def _jobs(variant: str) -> dict[str, type[cogworker.Job]]:
    return {io_work.KIND: VARIANTS[variant][0]}


class Client(common.AsyncClient):
    """`cogworker.AsyncClient`, made on the harness's event loop."""

    async def astart(self) -> None:
        self.client = cogworker.AsyncClient(_config(self.variant, self.url))
        self.jobs = _jobs(self.variant)

    async def aenqueue(self, kind: str, arg: int) -> None:
        await self.client.enqueue(self.jobs[kind], arg)

    async def aclose(self) -> None:
        await self.client.aclose()


class FillClient(SyncClient):
    """The sync client, for queueing the drain's jobs (bench/io_run.py)."""

    def __init__(self, url: str, variant: str):
        self.jobs = _jobs(variant)
        super().__init__(url, variant)

    def config(self, url: str) -> cogworker.Config:
        return _config(self.variant, url)
