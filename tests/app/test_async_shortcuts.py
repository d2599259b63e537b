"""The awaited shortcuts (`aperform_async`, `aperform_in`, `aperform_at`): one AsyncClient per
event loop, made from the configured config, closed when its loop ends."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app import default_clients
from cogworker.app.default_clients import default_async_client
from tests.app.helpers import queue_payloads, zset_entries
from tests.app.jobs import Record
from tests.support.processes import wait_until
from tests.support.redis_server import RedisServer


def connections_to(rc: redis.Redis, db: int) -> int:
    """How many connections Redis has to database `db` (each test's clients use their own)."""
    return sum(entry["db"] == str(db) for entry in rc.client_list())


def jobs_in(redis_server: RedisServer, db: int) -> list[dict[str, Any]]:
    """The jobs on the default queue of database `db`, the oldest first."""
    with redis.Redis(port=redis_server.port, db=db) as client:
        return list(reversed(queue_payloads(client, "default")))


@pytest.fixture
def configure_db(
    redis_url: str, redis_server: RedisServer
) -> Iterator[Callable[[int], cogworker.Config]]:
    """`cogworker.configure` with the test's Redis, on the database asked for (flushed)."""

    def configure(db: int) -> cogworker.Config:
        with redis.Redis(port=redis_server.port, db=db) as client:
            client.flushdb()
        config = cogworker.Config(redis_url=f"redis://127.0.0.1:{redis_server.port}/{db}")
        cogworker.configure(config)
        return config

    yield configure
    default_clients.default_client().close()
    default_clients._default = None


def test_the_shortcuts_enqueue_through_the_configured_redis(
    rc: redis.Redis, configured: cogworker.Client
) -> None:
    """aperform_async (its jid pushed once however often), aperform_in and aperform_at land
    as the sync shortcuts' do."""
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)

    async def main() -> list[str | None]:
        return [
            await Record.aperform_async(1, jid="order-1"),
            await Record.aperform_async(1, jid="order-1"),
            await Record.aperform_in(60, 2),
            await Record.aperform_at(later, 3),
        ]

    now_jid, again, in_jid, at_jid = asyncio.run(main())

    assert (now_jid, again) == ("order-1", "order-1")
    assert [job["jid"] for job in queue_payloads(rc, "default")] == ["order-1"]
    scheduled = {job["jid"]: score for job, score in zset_entries(rc, keys.schedule("default"))}
    assert set(scheduled) == {in_jid, at_jid}
    assert scheduled[at_jid] == pytest.approx(later.timestamp())


def test_each_loop_has_one_client_closed_when_the_loop_ends(
    rc: redis.Redis, redis_server: RedisServer, configure_db: Callable[[int], cogworker.Config]
) -> None:
    """Within one loop the shortcuts share one client; asyncio.run's end closes it (its
    connection goes, nothing is left unclosed), and the next loop gets a client of its own."""
    configure_db(3)

    async def main() -> cogworker.AsyncClient:
        first = await default_async_client()
        await Record.aperform_async(1)
        assert await default_async_client() is first
        assert connections_to(rc, 3) == 1
        return first

    first = asyncio.run(main())
    wait_until(lambda: connections_to(rc, 3) == 0, 10)

    second = asyncio.run(main())
    assert second is not first
    wait_until(lambda: connections_to(rc, 3) == 0, 10)
    assert len(jobs_in(redis_server, 3)) == 2


def test_configuring_anew_gives_the_loop_a_new_client_and_closes_the_old(
    rc: redis.Redis, redis_server: RedisServer, configure_db: Callable[[int], cogworker.Config]
) -> None:
    """`cogworker.configure` called again while a loop runs: its next shortcut goes through
    a client of the new config, and the old client's connection is closed."""
    configure_db(4)

    async def main() -> None:
        await Record.aperform_async(1)
        old = await default_async_client()
        new_config = configure_db(5)
        await Record.aperform_async(2)
        new = await default_async_client()
        assert new is not old
        assert new.config is new_config
        assert connections_to(rc, 4) == 0
        assert connections_to(rc, 5) == 1

    asyncio.run(main())
    assert [job["args"] for job in jobs_in(redis_server, 4)] == [[1]]
    assert [job["args"] for job in jobs_in(redis_server, 5)] == [[2]]
