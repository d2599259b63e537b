"""Fixtures of the fault tests: a Redis of the test's own, an oracle file, worker starters.

A test marked `on_both_topologies` runs on its own durable server, then on the local
cluster (`fault_url`); one that stops, kills or pauses `server` stays on one node."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters.redis_client import RedisClient
from tests.faults import oracle
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer, RedisServerFactory
from tests.support.topology import Topology, plain_client

APP = "tests.faults.jobs:config"
StartWorker = Callable[..., CogworkerProcess]


@pytest.fixture
def server(redis_server_factory: RedisServerFactory) -> RedisServer:
    """A durable Redis of the test's own (append-only, fsync always), to kill and restart."""
    return redis_server_factory(appendonly=True)


@pytest.fixture
def fault_url(topology: Topology, request: pytest.FixtureRequest) -> str:
    """The URL of the test's Redis: its own durable `server` on one node, the flushed local
    cluster's on a cluster."""
    if topology == "cluster":
        url: str = request.getfixturevalue("redis_url")
        return url
    server: RedisServer = request.getfixturevalue("server")
    return server.url


@pytest.fixture
def oracle_file(tmp_path: Path) -> Path:
    """The append-only record of job starts and ends."""
    return tmp_path / "oracle.log"


@pytest.fixture
def client_config(fault_url: str) -> cogworker.Config:
    """The clients' config: the test's Redis."""
    return cogworker.Config(redis_url=fault_url)


@pytest.fixture
def client(client_config: cogworker.Config) -> Iterator[cogworker.Client]:
    """A cogworker client on the test's Redis."""
    made = cogworker.Client(client_config)
    yield made
    made.close()


@pytest.fixture
def inspect(fault_url: str) -> Iterator[RedisClient]:
    """A plain client for looking at Redis (tolerant of restarts)."""
    connection = plain_client(fault_url, socket_timeout=5)
    yield connection
    connection.close()


@pytest.fixture
def start_worker(
    cogworker_factory: CogworkerFactory, fault_url: str, oracle_file: Path
) -> StartWorker:
    """Start a fault-test worker on the test's Redis: `start_worker(concurrency=4, ...)`."""

    def start(app: str = APP, **options: object) -> CogworkerProcess:
        env = {"COGWORKER_ORACLE": str(oracle_file), "COGWORKER_TEST_REDIS_URL": fault_url}
        return cogworker_factory(app, redis_url=fault_url, env=env, **options)  # type: ignore[arg-type]

    return start


def stop_all(*workers: CogworkerProcess) -> None:
    """SIGTERM every live worker and wait for each to exit cleanly."""
    for worker in workers:
        if worker.is_running:
            worker.send_signal(signal.SIGTERM)
    for worker in workers:
        if worker.returncode is None:
            assert worker.wait_for_exit(20) == 0, worker.log_tail()


def registered(inspect: redis.Redis, count: int) -> None:
    """Wait until `count` workers have registered."""
    wait_until(lambda: inspect.scard("cogworker:processes") >= count, 20, message="workers up")


def each_registered(inspect: redis.Redis, *workers: CogworkerProcess) -> None:
    """Wait until every live one of `workers` has registered (its stop handlers are in
    place by then: a SIGTERM earlier, mid-import, ends it by the default action)."""

    def pids_registered() -> set[int]:
        identities = inspect.smembers("cogworker:processes")
        return {int(identity.split(b":")[-2]) for identity in identities}

    def up() -> bool:
        live = {worker.pid for worker in workers if worker.is_running}
        return live <= pids_registered()

    wait_until(up, 20, message="restarted workers up")


def starts_of(oracle_file: Path, jid: str) -> int:
    """How many times the oracle saw `jid` start."""
    return oracle.runs(oracle_file)[0][jid]
