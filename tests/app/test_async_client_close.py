"""Closing an AsyncClient: the enqueues in flight land and leave no connection open, later
calls are refused, and a result's wait is interrupted rather than waited for.  Each test
has a Redis of its own: the session's holds other tests' connections, closing as they may."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis

import cogworker
from cogworker import AsyncClient
from tests.app.helpers import queue_payloads
from tests.app.jobs import Record
from tests.support.redis_server import RedisServerFactory


@pytest.fixture
def own_redis(redis_server_factory: RedisServerFactory) -> Iterator[tuple[redis.Redis, str]]:
    """A Redis no other test uses: an inspecting client of it, and its URL."""
    server = redis_server_factory()
    with server.client() as inspector:
        yield inspector, server.url


def connections(rc: redis.Redis) -> int:
    """The clients connected to the test's Redis, this inspector among them."""
    return len(rc.client_list())


def test_enqueues_in_flight_at_the_close_land_and_leave_no_connection(
    own_redis: tuple[redis.Redis, str],
) -> None:
    """Fifty enqueues started just before `aclose`: all pushed, none refused, and once
    closed the client holds no connection; a call after the close is refused."""
    rc, redis_url = own_redis
    assert connections(rc) == 1

    async def main() -> list[str | None]:
        client = AsyncClient(cogworker.Config(redis_url=redis_url))
        await client.enqueue(Record, 0)  # connected
        in_flight = [asyncio.create_task(client.enqueue(Record, n)) for n in range(1, 51)]
        await asyncio.sleep(0)  # each has begun
        await client.aclose()
        with pytest.raises(cogworker.ClientClosedError, match="aclose"):
            await client.enqueue(Record, 51)
        return await asyncio.gather(*in_flight)

    jids = asyncio.run(main())

    assert None not in jids
    assert {job["jid"] for job in queue_payloads(rc, "default")} >= set(jids)
    assert len(queue_payloads(rc, "default")) == 51
    assert connections(rc) == 1


def test_a_result_wait_is_interrupted_by_the_close(own_redis: tuple[redis.Redis, str]) -> None:
    """A wait without a timeout for a job that never ends: `aclose` ends it with
    ClientClosedError at once, rather than waiting for it, and leaves no connection."""
    rc, redis_url = own_redis

    async def main() -> BaseException | None:
        client = AsyncClient(cogworker.Config(redis_url=redis_url, keep_result=60))
        jid = await client.enqueue(Record, 1)
        assert jid is not None
        waiter = asyncio.create_task(client.result(jid))
        async with asyncio.timeout(20):
            while not any(entry["cmd"] == "blmove" for entry in rc.client_list()):
                await asyncio.sleep(0.01)  # until the wait is blocked in Redis
        await client.aclose()
        (ended,) = await asyncio.gather(waiter, return_exceptions=True)
        return ended

    ended = asyncio.run(main())

    assert isinstance(ended, cogworker.ClientClosedError)
    assert connections(rc) == 1
