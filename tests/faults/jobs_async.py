"""Async job classes (`async def perform`) for the fault tests, noting runs in the oracle."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import attrs

import cogworker
from cogworker import AsyncCallNext, CallNext, RunContext
from tests.faults.jobs import config, note, side_effects

#: A worker whose async jobs may overlap by the hundred on one loop.
async_config = attrs.evolve(config, async_concurrency=50, async_block_warning=0.3)
#: A worker that runs no async job.
no_async_config = attrs.evolve(config, async_concurrency=0)


class AsyncSleep(cogworker.Job):
    """Awaits `seconds`, counting how many run at once (Redis keys `async:now`, `async:most`)."""

    async def perform(self, seconds: float) -> None:
        """Sleep on the loop, noting start and end."""
        note("start", self.jid)
        now = side_effects().incr("async:now")
        side_effects().eval(
            "if tonumber(redis.call('GET', KEYS[1]) or 0) < tonumber(ARGV[1]) then "
            "redis.call('SET', KEYS[1], ARGV[1]) end",
            1,
            "async:most",
            now,
        )
        try:
            await asyncio.sleep(seconds)
        finally:
            side_effects().decr("async:now")
        note("end", self.jid)


class AsyncFails(cogworker.Job, retry=3):
    """Fails every time; its async `retry_in` asks for a retry 1,000 s away, or KILL."""

    async def perform(self, kill: bool) -> None:
        """Raise after an await."""
        note("start", self.jid)
        await asyncio.sleep(0)
        raise ValueError(f"async failure, kill={kill}")

    @classmethod
    async def retry_in(cls, count: int, exception: BaseException, job: dict[str, object]) -> object:
        """An async hook: awaited on the worker's loop."""
        await asyncio.sleep(0)
        return cogworker.KILL if job["args"] == [True] else 1000

    @classmethod
    async def retries_exhausted(cls, job: dict[str, object], exception: BaseException) -> None:
        """An async death hook, run to its end."""
        await asyncio.sleep(0)
        side_effects().rpush("async:exhausted", str(job["jid"]))


class BlocksTheLoop(cogworker.Job):
    """Calls time.sleep inside an async def: blocks the event loop for `seconds`."""

    async def perform(self, seconds: float) -> None:
        """Block."""
        note("start", self.jid)
        time.sleep(seconds)
        note("end", self.jid)


class AwaitsAGate(cogworker.Job):
    """Awaits until the gate file exists."""

    async def perform(self, gate: str) -> None:
        """Poll the gate without blocking the loop."""
        note("start", self.jid)
        while not Path(gate).exists():
            await asyncio.sleep(0.02)
        note("end", self.jid)


def outer_sync(ctx: RunContext, run: CallNext) -> None:
    """A sync middleware: it wraps async jobs too, its run() blocking until they end."""
    side_effects().rpush(f"layers:{ctx.job.jid}", "sync-in")
    run()
    side_effects().rpush(f"layers:{ctx.job.jid}", "sync-out")


async def inner_async(ctx: RunContext, run: AsyncCallNext) -> None:
    """An async middleware: wraps async jobs only, passing other arguments on."""
    side_effects().rpush(f"layers:{ctx.job.jid}", "async-in")
    await run(args=[0.01])
    side_effects().rpush(f"layers:{ctx.job.jid}", "async-out")


layered_config = attrs.evolve(async_config, server_middleware=(outer_sync, inner_async))
