"""The asyncio client: the same timeouts as the sync one, and a failed command never re-sent."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest
import redis

from cogworker.adapters import redis_target
from cogworker.adapters.connection import CONNECT_TIMEOUT, SOCKET_TIMEOUT, connect_async
from tests.support.redis_server import RedisServer


def test_it_talks_to_redis_with_the_sync_clients_timeouts(redis_url: str) -> None:
    """A command round-trips, over connections with the socket and connect timeouts set."""

    async def main() -> tuple[object, dict[str, object]]:
        client = connect_async(redis_target.parse(redis_url, "the test"))
        try:
            await client.set("async-key", "x")
            return await client.get("async-key"), client.connection_pool.connection_kwargs
        finally:
            await client.aclose()

    value, options = asyncio.run(main())
    assert value == b"x"
    assert options["socket_timeout"] == SOCKET_TIMEOUT
    assert options["socket_connect_timeout"] == CONNECT_TIMEOUT


def test_a_connection_dropped_by_the_server_is_not_tried_again() -> None:
    """A server that hangs up on every connection is connected to once: the error is raised."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def hang_up() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # the listener was closed: the test is over
                return
            accepted.append(1)
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    port = listener.getsockname()[1]

    async def main() -> None:
        client = connect_async(redis_target.parse(f"redis://127.0.0.1:{port}/0", "the test"))
        try:
            await client.ping()
        finally:
            await client.aclose()

    try:
        with pytest.raises(redis.ConnectionError):
            asyncio.run(main())
    finally:
        listener.close()
    assert accepted == [1]


def test_more_tasks_than_connections_wait_for_a_free_one(
    rc: redis.Redis, redis_server: RedisServer
) -> None:
    """Twenty concurrent commands on a client of three connections all succeed (where
    redis.asyncio's own pool refuses the fourth), over at most three connections."""
    url = f"redis://127.0.0.1:{redis_server.port}/5"
    target = redis_target.parse(url, "the test")

    async def main() -> None:
        client = connect_async(target, max_connections=3)
        try:
            await asyncio.gather(*(client.incr("count") for _ in range(20)))
            databases = [entry["db"] for entry in rc.client_list()]
            assert 1 <= databases.count("5") <= 3
        finally:
            await client.aclose()

    asyncio.run(main())
    with redis.Redis.from_url(url) as db5:
        assert db5.get("count") == b"20"


def test_a_queue_of_tasks_longer_than_the_socket_timeout_is_served(
    redis_server: RedisServer,
) -> None:
    """Tasks queued for one connection behind commands that together hold it longer than
    `SOCKET_TIMEOUT` each get it in turn: waiting in line is not Redis being away."""
    url = f"redis://127.0.0.1:{redis_server.port}/6"
    holders = int(SOCKET_TIMEOUT) + 2  # each holds the connection for a 1 s BLPOP

    async def main() -> list[object]:
        client = connect_async(redis_target.parse(url, "the test"), max_connections=1)
        try:
            waits = [client.blpop(["never-pushed"], timeout=1) for _ in range(holders)]
            return list(await asyncio.gather(*waits, client.ping()))
        finally:
            await client.aclose()

    replies = asyncio.run(main())
    assert replies == [None] * holders + [True]
