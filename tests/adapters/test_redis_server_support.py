"""The test suite's own redis-server: it starts, keeps AOF data, and freezes on demand."""

from __future__ import annotations

import subprocess

import pytest
import redis

from tests.support.processes import wait_until
from tests.support.redis_server import (
    RedisServer,
    RedisServerFactory,
    ServerExitedError,
    answers_ping,
    find_redis_server,
)


def test_started_server_answers_ping_on_its_own_port(fresh_redis_server: RedisServer) -> None:
    """A started server answers PING at its URL, which is never the shared 6379."""
    with redis.Redis.from_url(fresh_redis_server.url) as client:
        assert client.ping() is True
    assert fresh_redis_server.port != 6379
    assert fresh_redis_server.url == f"redis://127.0.0.1:{fresh_redis_server.port}/0"


def test_restart_keeps_data_written_to_the_append_only_file(
    redis_server_factory: RedisServerFactory,
) -> None:
    """With appendonly, data written before a restart is there after it, on the same port."""
    server = redis_server_factory(appendonly=True)
    port = server.port
    with server.client() as client:
        client.set(b"survivor", b"yes")

    server.restart()

    assert server.port == port
    with server.client() as client:
        assert client.get(b"survivor") == b"yes"


def test_paused_server_times_out_and_answers_again_when_resumed(
    fresh_redis_server: RedisServer,
) -> None:
    """While paused, a client with a short socket timeout times out; after resume it answers."""
    with fresh_redis_server.client(socket_timeout=0.2) as client:
        client.ping()
        fresh_redis_server.pause()
        with pytest.raises(redis.TimeoutError):
            client.ping()

        fresh_redis_server.resume()

        assert client.ping() is True


def test_a_port_another_server_took_meanwhile_is_not_taken_for_its_own(
    redis_server_factory: RedisServerFactory,
) -> None:
    """Restarting on a port another redis-server holds (and answers PING on) fails, naming
    the bind error, instead of passing that server off as the one it started."""
    server = redis_server_factory()
    port = server.port
    server.stop()
    intruder = subprocess.Popen(
        [find_redis_server(), "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: answers_ping(port), 10.0, message="the intruder never answered")

        with pytest.raises(ServerExitedError, match="Address already in use"):
            server.restart()
    finally:
        intruder.terminate()
        intruder.wait(10)
