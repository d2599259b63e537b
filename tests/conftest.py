"""Fixtures shared by the whole suite: private Redis servers and real worker processes.

No test talks to a Redis it did not start: the suite runs its own
redis-server on a free port, and COGWORKER_REDIS_URL points at a closed port
for the whole session, so code that falls back to a default URL fails fast
instead of quietly using a Redis on 127.0.0.1:6379.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import cogworker
from cogworker.adapters.redis_client import RedisClient
from tests.support import fast_tier
from tests.support.async_variants import KINDS, Kind
from tests.support.clients import ClientKind, EitherClient, client_of
from tests.support.cluster import LocalCluster
from tests.support.processes import CogworkerFactory, CogworkerProcess, start_worker
from tests.support.redis_server import RedisServer, RedisServerFactory
from tests.support.topology import Topology, cluster_url, flushed_url, plain_client
from tests.support.topology_marks import generate_topologies

# No per-example deadline: the suite asserts nothing about timing, and an example that
# a busy machine slows past Hypothesis's default 200 ms would fail as "unreliable".
settings.register_profile("cogworker", deadline=None)
settings.load_profile("cogworker")

#: Nothing listens on port 1: connecting is refused at once.
UNREACHABLE_REDIS_URL = "redis://127.0.0.1:1/0"
#: A tmpfs, where a durable test server keeps its append-only file.
MEMORY_DISK = Path("/dev/shm")


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--fast`: only the tests that start no process (tests/support/fast_tier.py)."""
    parser.addoption(
        "--fast", action="store_true", help="only the tests that start no process, checked"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Point the environment's Redis URL at nothing, so no test reaches a shared Redis;
    in a fast run, refuse every process a test would start."""
    os.environ["COGWORKER_REDIS_URL"] = UNREACHABLE_REDIS_URL
    if config.getoption("fast"):
        fast_tier.refuse_processes()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a fast run, keep the tests that start no process."""
    if config.getoption("fast"):
        fast_tier.select_fast(config, items)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a test marked `topologies(...)` on each topology it names, and one taking
    `client_kind` with each client (tests/support/topology_marks.py)."""
    generate_topologies(metafunc)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the whole session; tests reach it through `redis_url`."""
    server = RedisServer(tmp_path_factory.mktemp("redis-session")).start()
    yield server
    server.close()


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three primaries with a replica each, on loopback ports, started by the first test that
    asks (six processes, seconds to join) and stopped at the session's end."""
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster")).start()
    yield cluster
    cluster.close()


@pytest.fixture
def topology(request: pytest.FixtureRequest) -> Topology:
    """Where the test's Redis lives: one server, unless the test is marked `topologies(...)`
    and runs on the cluster (tests/support/topology.py)."""
    chosen: Topology = getattr(request, "param", "single")
    return chosen


@pytest.fixture
def redis_url(topology: Topology, request: pytest.FixtureRequest) -> str:
    """The URL of the test's Redis, its data flushed before the test: the session server's,
    or the local cluster's `redis+cluster://` URL (every primary flushed)."""
    if topology == "cluster":
        return flushed_url(cluster_url(request.getfixturevalue("local_cluster")))
    server: RedisServer = request.getfixturevalue("redis_server")
    with server.client(socket_timeout=10.0) as client:
        client.flushall()
    return server.url


@pytest.fixture
def rc(redis_url: str) -> Iterator[RedisClient]:
    """A plain client of the test's (flushed) Redis, for setting up and checking keys: a
    `redis.RedisCluster` on the cluster."""
    client = plain_client(redis_url)
    yield client
    client.close()


@pytest.fixture
def client(redis_url: str) -> Iterator[cogworker.Client]:
    """A cogworker Client on the test's Redis."""
    enqueuer = cogworker.Client(cogworker.Config(redis_url=redis_url))
    yield enqueuer
    enqueuer.close()


@pytest.fixture
def client_config(redis_url: str) -> cogworker.Config:
    """The config of `either_client`: the test's Redis (a directory's conftest may say
    another)."""
    return cogworker.Config(redis_url=redis_url)


@pytest.fixture
def client_kind(request: pytest.FixtureRequest) -> ClientKind:
    """`Client`, then `AsyncClient`: a test using it runs for each (parametrized by
    `pytest_generate_tests`: tests/support/topology_marks.py)."""
    chosen: ClientKind = request.param
    return chosen


@pytest.fixture
def either_client(
    client_config: cogworker.Config, client_kind: ClientKind
) -> Iterator[EitherClient]:
    """A `Client`, then an `AsyncClient` (blocking, see tests/support/clients.py), of
    `client_config`: a test using it runs for each."""
    made = client_of(client_kind, client_config)
    yield made
    made.close()


@pytest.fixture
def redis_server_factory(tmp_path: Path) -> Iterator[RedisServerFactory]:
    """Start servers of the test's own (`appendonly=True` for durability); all stop at teardown."""
    servers: list[RedisServer] = []
    in_memory: list[Path] = []

    def start(*, appendonly: bool = False) -> RedisServer:
        directory = tmp_path / f"redis-{len(servers) + 1}"
        if appendonly and MEMORY_DISK.is_dir():
            # fsync on every write: on a disk shared with a busy suite that can stall a
            # test for seconds; the file survives a killed server on a tmpfs just as well.
            directory = Path(tempfile.mkdtemp(prefix="cogworker-aof-", dir=MEMORY_DISK))
            in_memory.append(directory)
        else:
            directory.mkdir()
        server = RedisServer(directory, appendonly=appendonly)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.close()
    for directory in in_memory:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fresh_redis_server(redis_server_factory: RedisServerFactory) -> RedisServer:
    """A running server of the test's own, to stop, kill, pause or restart."""
    return redis_server_factory()


#: The workers a test started, for its failure report.
STARTED_WORKERS = pytest.StashKey[list[CogworkerProcess]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test's report carries the log tail of every worker it started: a worker that
    died or never registered says why there."""
    report: pytest.TestReport = yield
    if report.failed and call.when == "call":
        for worker in item.stash.get(STARTED_WORKERS, []):
            state = "running" if worker.is_running else f"exited {worker.returncode}"
            title = f"{worker.log_path.name} (pid {worker.pid}, {state}), tail"
            report.sections.append((title, worker.log_tail()))
    return report


@pytest.fixture
def cogworker_factory(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[CogworkerFactory]:
    """Start `cogworker work APP ...` subprocesses (logs in tmp_path); all killed at teardown."""
    processes: list[CogworkerProcess] = []
    request.node.stash[STARTED_WORKERS] = processes

    def start(app: str, **options: Any) -> CogworkerProcess:
        name = f"worker-{len(processes) + 1}"
        worker = start_worker(app, directory=tmp_path, name=name, **options)
        processes.append(worker)
        return worker

    yield start
    for worker in processes:
        worker.close()


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> Kind:
    """The kind of job class the test runs: sync, then async (`tests.support.async_variants`)."""
    chosen: Kind = request.param
    return chosen
