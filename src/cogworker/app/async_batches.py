"""`AsyncClient.batch`: `Client.batch` for asyncio code (see `app/batches.py`).

The batch's own writes (open, join, close and its fold) run `Batch`'s code on a
worker thread over the async client's blocking connection, as its cancels do;
the members' pushes are the async client's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType

import attrs

from cogworker.app.batches import Batch
from cogworker.app.job_base import JobBase
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON

AsyncBuild = Callable[[type[JobBase], Sequence[JSON], str | None], Awaitable[JobRecord]]


@attrs.define
class AsyncBatch:
    """A batch being filled from asyncio code: `async with client.batch(...) as batch:`."""

    opening: Callable[[], Awaitable[Batch]]
    build: AsyncBuild
    push: Callable[[JobRecord], Awaitable[str | None]]
    _batch: Batch | None = None

    @property
    def batch(self) -> Batch:
        """The batch opened by `async with` (RuntimeError before)."""
        if self._batch is None:
            raise RuntimeError("open the batch first: async with client.batch(...) as batch")
        return self._batch

    @property
    def bid(self) -> str:
        """The batch's id (for `AsyncClient.batch_status`)."""
        return self.batch.bid

    async def enqueue(
        self, job_class: type[JobBase], *args: JSON, jid: str | None = None
    ) -> str | None:
        """See `Batch.enqueue`."""
        self.batch.check_open(job_class)
        record = await self.build(job_class, args, jid)
        (job,) = await asyncio.to_thread(self.batch.join, [record])
        pushed: str | None = None
        try:
            pushed = await self.push(job)
        finally:
            await asyncio.to_thread(self.batch.pushed, [job], [pushed])
        return pushed

    async def close(self) -> None:
        """See `Batch.close`."""
        await asyncio.to_thread(self.batch.close)

    async def __aenter__(self) -> AsyncBatch:
        self._batch = await self.opening()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
