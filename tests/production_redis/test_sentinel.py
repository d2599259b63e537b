"""Sentinel: a worker, a client, the dashboard and the pulse find the primary through the
sentinels, authenticate to them as an ACL user, and follow a switch of primary (READONLY).

The topology is this module's (see conftest); the switch tests run last and leave the
roles swapped, which every test here copes with: each asks the sentinels.  The client
tests run for `Client` and `AsyncClient` alike (see clients.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from pathlib import Path

import httpx
import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.worker import pulse
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.production_redis.servers import MASTER, SentinelTopology
from tests.support.clients import CLIENT_KINDS, client_of
from tests.support.processes import CogworkerProcess, run_to_exit, wait_until
from tests.web.helpers import serving

APP = "tests.production_redis.jobs:config"


def sentinel_config(topology: SentinelTopology, **fields: object) -> cogworker.Config:
    """A Config naming the topology's sentinels in fields rather than a URL."""
    sentinels = tuple(("127.0.0.1", sentinel.port) for sentinel in topology.sentinels)
    return cogworker.Config(sentinels=sentinels, sentinel_master=MASTER, **fields)  # type: ignore[arg-type]  # fields of Config


def primary_client(topology: SentinelTopology) -> redis.Redis:
    """A plain client of whichever server the sentinels call the primary now."""
    port = topology.primary_port()
    assert port is not None
    return redis.Redis(port=port, socket_timeout=5.0)


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_worker_a_client_and_the_dashboard_work_through_sentinel(
    sentinel_topology: SentinelTopology, rc: redis.Redis, redis_url: str, tmp_path: Path, kind: str
) -> None:
    """Config.sentinels for either client, a redis+sentinel:// URL in the environment for
    the worker, the same URL for the dashboard: the drain runs on the primary."""
    client = client_of(kind, sentinel_config(sentinel_topology))
    mix = drain.Mix(plain=50, retried=5, scheduled=5, dead=2, unique=2)
    drain.enqueue(client, mix)
    client.close()
    env = {"COGWORKER_TEST_REDIS_URL": redis_url, "COGWORKER_REDIS_URL": sentinel_topology.url()}
    with CogworkerProcess(["work", APP], directory=tmp_path, env=env) as worker:
        drain.wait_drained(rc, mix, worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()
    with primary_client(sentinel_topology) as primary:
        assert primary.zcard(keys.dead("default")) >= mix.dead

    with serving(tmp_path, "--redis-url", sentinel_topology.url()) as base:
        page = httpx.get(base + "/dead", timeout=10)
    assert page.status_code == 200
    assert "tests.production_redis.jobs.Dies" in page.text
    assert "redis+sentinel://127.0.0.1:" in page.text


def test_the_pulse_beats_through_sentinel(sentinel_topology: SentinelTopology) -> None:
    """The pulse asks the sentinels for the primary, then stamps a late beat there."""
    with primary_client(sentinel_topology) as primary:
        primary.sadd(keys.PROCESSES, "p1")
        primary.hset(keys.process("p1"), "beat", "0")
        config = sentinel_config(sentinel_topology, heartbeat_interval=0.1, orphan_threshold=1.0)
        companion = pulse.start(config, config.redis_target(), "p1", logging.getLogger("test"))
        assert companion is not None
        try:
            wait_until(lambda: float(primary.hget(keys.process("p1"), "beat") or 0) > 0, 20)
        finally:
            companion.stop()
        primary.delete(keys.PROCESSES, keys.process("p1"))


@pytest.fixture
def sentinel_user(sentinel_topology: SentinelTopology) -> tuple[str, str]:
    """An ACL user on every sentinel, allowed only what a client asks a sentinel."""
    for sentinel in sentinel_topology.sentinels:
        with sentinel.client() as admin:
            admin.execute_command(
                "ACL", "SETUSER", "asker", "on", ">asker-secret", "-@all", "+ping", "+hello",
                "+sentinel|masters", "+sentinel|get-master-addr-by-name",
            )  # fmt: skip
    return "asker", "asker-secret"


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_the_sentinels_are_asked_as_an_acl_user(
    sentinel_topology: SentinelTopology, sentinel_user: tuple[str, str], kind: str
) -> None:
    """sentinel_username / sentinel_password reach the sentinels (in the URL, and in fields)."""
    username, password = sentinel_user
    from_url = cogworker.Config(
        redis_url=f"{sentinel_topology.url()}?sentinel_username={username}"
        f"&sentinel_password={password}"
    )
    from_fields = sentinel_config(
        sentinel_topology, sentinel_username=username, sentinel_password=password
    )
    for config in (from_url, from_fields):
        client = client_of(kind, config)
        try:
            assert client.enqueue(Drain, 1) is not None
        finally:
            client.close()


def open_connections_to(ports: Collection[int]) -> set[str]:
    """This process's open TCP connections to any of `ports` on 127.0.0.1 (their sockets'
    inodes): read from /proc, so a socket nobody closed counts until it is."""
    sockets = {os.readlink(fd) for fd in Path("/proc/self/fd").iterdir() if fd.is_symlink()}
    found = set()
    for line in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        port, inode = int(fields[2].split(":")[1], 16), fields[9]
        if port in ports and f"socket:[{inode}]" in sockets:
            found.add(inode)
    return found


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_closing_a_client_closes_its_connections_to_the_sentinels(
    sentinel_topology: SentinelTopology, kind: str
) -> None:
    """Left open, the garbage collector found them at the interpreter's exit (a
    ResourceWarning, which failed a test run now and then)."""
    ports = {sentinel.port for sentinel in sentinel_topology.sentinels}
    before = open_connections_to(ports)  # (none, unless another test left some open)
    client = client_of(kind, sentinel_config(sentinel_topology))
    try:
        client.status("any")
        assert open_connections_to(ports) - before, "the client asked a sentinel"
    finally:
        client.close()

    assert open_connections_to(ports) - before == set()


@pytest.mark.parametrize("command", ["work", "serve"])
def test_an_unknown_master_name_is_one_line(
    sentinel_topology: SentinelTopology, tmp_path: Path, command: str
) -> None:
    """Sentinels that monitor no master of that name: exit status 2, the names they know."""
    url = sentinel_topology.url(master="nosuch")

    status, lines = run_to_exit(tmp_path, command, APP, "--redis-url", url)

    assert status == 2, lines
    assert lines == [
        f"Error: --redis-url {url}: the sentinels monitor no master named 'nosuch' "
        "(they know 'mymaster')"
    ]


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_the_client_says_the_master_name_is_unknown(
    sentinel_topology: SentinelTopology, kind: str
) -> None:
    """Either client's RedisRefusedError names the setting and the known master names."""
    config = cogworker.Config(redis_url=sentinel_topology.url(master="nosuch"))
    client = client_of(kind, config)
    try:
        with pytest.raises(cogworker.RedisRefusedError) as info:
            client.status("any")
    finally:
        client.close()
    assert str(info.value).startswith("can't read a status: Config.redis_url redis+sentinel://")
    assert "no master named 'nosuch' (they know 'mymaster')" in str(info.value)


def test_refused_sentinel_credentials_are_one_line(
    sentinel_topology: SentinelTopology, sentinel_user: tuple[str, str], tmp_path: Path
) -> None:
    """A wrong sentinel_password: exit status 2, naming the sentinel settings."""
    url = f"{sentinel_topology.url()}?sentinel_username=asker&sentinel_password=wrong"

    status, lines = run_to_exit(tmp_path, "work", APP, "--redis-url", url)

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert "the sentinels refused the sentinel credentials (sentinel_username" in lines[0]
    assert "wrong" not in lines[0].replace("sentinel_password): ", "")


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_switch_of_primary_is_followed_without_a_restart(
    sentinel_topology: SentinelTopology, rc: redis.Redis, redis_url: str, tmp_path: Path, kind: str
) -> None:
    """SENTINEL FAILOVER demotes the primary under a running worker and either client
    (READONLY, UNBLOCKED): both reconnect through the sentinels and carry on on the new
    primary."""
    client = client_of(kind, cogworker.Config(redis_url=sentinel_topology.url()))
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    command = ["work", APP, "--redis-url", sentinel_topology.url()]
    with CogworkerProcess(command, directory=tmp_path, env=env) as worker:
        before = drain.Mix(plain=20, retried=0, scheduled=0, dead=0, unique=0)
        drain.enqueue(client, before)
        drain.wait_drained(rc, before, worker)
        old = sentinel_topology.primary_port()
        with sentinel_topology.sentinels[0].client() as sentinel:
            sentinel.sentinel_failover(MASTER)
        wait_until(lambda: sentinel_topology.primary_port() not in (None, old), 30.0)

        jids = wait_until(
            lambda: client.enqueue_many(Drain, [[n] for n in range(20)]),
            30.0,
            ignore=(cogworker.RedisUnavailableError,),
        )
        wait_until(lambda: set(jids) <= set(drain.runs(rc, "drain")), 30.0, message=worker.log_tail)
        assert worker.is_running
        assert worker.terminate(30.0) == 0, worker.log_tail()
    client.close()
