"""A unix socket: the clients, a worker (and its pulse) and the dashboard over unix://."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import attrs
import httpx
import pytest
import redis

import cogworker
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.support.processes import CogworkerProcess
from tests.support.redis_server import RedisServer
from tests.web.helpers import serving

APP = "tests.production_redis.jobs:config"


@pytest.fixture
def socket_url(tmp_path: Path) -> Iterator[str]:
    """A Redis listening on a unix socket (and a TCP port nothing here uses), db 2."""
    path = tmp_path / "redis.sock"
    server = RedisServer(extra_args=["--unixsocket", str(path), "--unixsocketperm", "700"])
    with server:
        yield f"unix://{path}?db=2"


def test_a_worker_the_clients_and_the_dashboard_work_over_a_unix_socket(
    socket_url: str, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """The sync and async clients enqueue, a worker on a unix:// URL drains, the dashboard
    shows the dead jobs: every connection kind cogworker opens works over the socket."""
    config = cogworker.Config(redis_url=socket_url)
    client = cogworker.Client(config)
    mix = drain.Mix(plain=50, retried=5, scheduled=5, dead=2, unique=2)
    drain.enqueue(client, mix)
    client.close()

    async def enqueue_async() -> str | None:
        async_client = cogworker.AsyncClient(config)
        try:
            return await async_client.enqueue(Drain, mix.plain + mix.scheduled)
        finally:
            await async_client.aclose()

    assert asyncio.run(enqueue_async()) is not None
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    command = ["work", APP, "--redis-url", socket_url]
    with CogworkerProcess(command, directory=tmp_path, env=env) as worker:
        drain.wait_drained(rc, attrs.evolve(mix, plain=mix.plain + 1), worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()

    with serving(tmp_path, "--redis-url", socket_url) as base:
        page = httpx.get(base + "/dead", timeout=10)
    assert page.status_code == 200
    assert "tests.production_redis.jobs.Dies" in page.text
