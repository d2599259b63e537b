"""Client middleware, sync and async, in AsyncClient and in the sync Client."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
import redis

import cogworker
from cogworker import AsyncClient
from cogworker.app.middleware import AsyncPush, Push
from cogworker.domain.job import JobRecord
from tests.app.helpers import queue_payloads, with_async_client
from tests.app.jobs import Record
from tests.unique import jobs as unique_jobs


def tagging(name: str) -> Any:
    """A sync client middleware adding `name` to the job's `path`."""

    def middleware(job: JobRecord, push: Push) -> str | None:
        path = [*job.extra.get("path", []), name]  # type: ignore[misc]
        return push(attrs.evolve(job, extra={**job.extra, "path": path}))

    return middleware


def async_tagging(name: str, seen: list[str | None]) -> Any:
    """An async client middleware adding `name` to the job's `path`; it notes what its
    awaited push returned in `seen`."""

    async def middleware(job: JobRecord, push: AsyncPush) -> str | None:
        await asyncio.sleep(0)
        path = [*job.extra.get("path", []), name]  # type: ignore[misc]
        result = await push(attrs.evolve(job, extra={**job.extra, "path": path}))
        seen.append(result)
        return result

    return middleware


class AsyncStop:
    """An async client middleware object (an async __call__) that stops every push."""

    async def __call__(self, job: JobRecord, push: AsyncPush) -> str | None:
        return None


def stop(job: JobRecord, push: Push) -> str | None:
    """A sync client middleware that stops every push."""
    return None


def test_sync_and_async_middleware_wrap_each_push_in_order(rc: redis.Redis, redis_url: str) -> None:
    """sync, async, sync: each layer sees the job the one before passed on, in order, for
    enqueue and enqueue_many; the async layer awaits the push's real outcome (None for a
    unique duplicate)."""
    seen: list[str | None] = []
    middleware = (tagging("outer"), async_tagging("middle", seen), tagging("inner"))
    config = cogworker.Config(redis_url=redis_url, client_middleware=middleware)

    async def work(client: AsyncClient) -> list[Any]:
        return [
            await client.enqueue(Record, 1),
            await client.enqueue_many(Record, [[2], [3]]),
            await client.enqueue(unique_jobs.Report, 9),
            await client.enqueue(unique_jobs.Report, 9),
        ]

    one, many, unique_first, duplicate = with_async_client(config, work)

    assert unique_first is not None
    assert duplicate is None
    assert seen == [one, *many, unique_first, None]
    pushed = queue_payloads(rc, "default")
    assert {job["jid"] for job in pushed} == {one, *many, unique_first}
    assert all(job["path"] == ["outer", "middle", "inner"] for job in pushed)


@pytest.mark.parametrize("stopper", [stop, AsyncStop()], ids=["sync", "async-call-object"])
def test_a_middleware_that_does_not_push_stops_the_enqueue(
    rc: redis.Redis, redis_url: str, stopper: Any
) -> None:
    """A sync or async middleware that never calls push: the enqueue returns None, and
    nothing reaches Redis."""
    config = cogworker.Config(redis_url=redis_url, client_middleware=(stopper,))

    async def work(client: AsyncClient) -> list[Any]:
        return [await client.enqueue(Record, 1), await client.enqueue_many(Record, [[2]])]

    assert with_async_client(config, work) == [None, [None]]
    assert rc.keys("cogworker:*") == []


def test_the_sync_client_runs_an_async_middleware_on_a_loop_of_its_own(
    rc: redis.Redis, redis_url: str
) -> None:
    """Client with an async middleware, from sync code: pushed through it (asyncio.run);
    from a thread whose loop runs: a RuntimeError pointing at the AsyncClient."""
    seen: list[str | None] = []
    config = cogworker.Config(
        redis_url=redis_url, client_middleware=(async_tagging("async", seen), tagging("sync"))
    )
    client = cogworker.Client(config)
    try:
        jid = client.enqueue(Record, 1)

        async def from_a_running_loop() -> None:
            with pytest.raises(RuntimeError, match=r"enqueue with cogworker\.AsyncClient"):
                client.enqueue(Record, 2)

        asyncio.run(from_a_running_loop())
    finally:
        client.close()
    [job] = queue_payloads(rc, "default")
    assert (job["jid"], job["path"]) == (jid, ["async", "sync"])
    assert seen == [jid]
