"""Configuring a Redis Cluster: the redis+cluster:// URLs, `Config.redis_cluster`, what can't
work on a cluster (a clear error), and the factory's client on the real local cluster."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

import cogworker
from cogworker.adapters.connection import connect
from cogworker.adapters.redis_target import RedisTarget, Tls, parse
from tests.app.cli_runner import Cli
from tests.cluster.test_cluster_drain import cluster_url
from tests.support.cluster import LocalCluster

FORMS = [
    pytest.param(
        "redis+cluster://u:pw@10.0.0.1:7000,10.0.0.2:7001",
        RedisTarget(
            setting="s",
            host="10.0.0.1",
            port=7000,
            username="u",
            password="pw",
            cluster=(("10.0.0.1", 7000), ("10.0.0.2", 7001)),
        ),
        "redis+cluster://u:***@10.0.0.1:7000,10.0.0.2:7001/0",
        id="cluster",
    ),
    pytest.param(
        "rediss+cluster://:pw@h/0?tls_ca_file=/ca.pem&tls_verify=ca",
        RedisTarget(
            setting="s",
            host="h",
            password="pw",
            cluster=(("h", 6379),),
            tls=Tls(ca_file="/ca.pem", verify="ca"),
        ),
        "rediss+cluster://***@h:6379/0",
        id="cluster-tls",
    ),
]


@pytest.mark.parametrize(("url", "target", "label"), FORMS)
def test_each_cluster_url_reads_as_its_target(url: str, target: RedisTarget, label: str) -> None:
    """The start-up nodes, credentials and TLS options land where they belong; the label
    never shows a password."""
    parsed = parse(url, "s")
    assert parsed == target
    assert parsed.label == label


def test_config_redis_cluster_makes_the_url_s_server_a_start_up_node() -> None:
    """A rediss:// URL with `redis_cluster`: its server is the one start-up node, with the
    URL's TLS and the fields' credentials."""
    config = cogworker.Config(
        redis_url="rediss://u@h:7000/0", redis_cluster=True, redis_password="pw-9"
    )
    target = config.redis_target()
    assert target.cluster == (("h", 7000),)
    assert (target.username, target.password, target.tls) == ("u", "pw-9", Tls())
    assert target.label == "rediss+cluster://u:***@h:7000/0"


CONFLICTS = [
    pytest.param(
        {"redis_url": "redis://h/2", "redis_cluster": True},
        "a Redis Cluster has only database 0, not 2",
        id="database",
    ),
    pytest.param(
        {"redis_url": "unix:///run/redis.sock", "redis_cluster": True},
        "Config.redis_cluster needs a redis:// or rediss:// URL",
        id="unix",
    ),
    pytest.param(
        {"sentinels": [("s", 1)], "sentinel_master": "m", "redis_cluster": True},
        "Config.redis_cluster needs a redis:// or rediss:// URL",
        id="sentinels",
    ),
]


@pytest.mark.parametrize(("fields", "says"), CONFLICTS)
def test_what_a_cluster_cannot_do_is_a_config_error(fields: dict[str, object], says: str) -> None:
    """Raised when the Config is built, naming the setting."""
    with pytest.raises(cogworker.ConfigError, match=says):
        cogworker.Config(**fields)  # type: ignore[arg-type]  # the fields under test


def test_an_async_client_of_a_cluster_no_node_answers_raises_unavailable_errors() -> None:
    """An AsyncClient of a cluster is made without connecting; with no node answering, an
    enqueue is an EnqueueUnavailableError and a status read a RedisUnavailableError (the
    cluster's "unreachable" raised as a connection error), neither showing the password."""
    config = cogworker.Config(redis_url="redis+cluster://u:secret@127.0.0.1:1")

    async def calls() -> list[BaseException]:
        errors: list[BaseException] = []
        async with cogworker.AsyncClient(config) as client:
            assert isinstance(client.redis, redis.asyncio.RedisCluster)
            for call in (client.enqueue(_Plain, jid="lost-1"), client.status("lost-1")):
                with pytest.raises(cogworker.RedisUnavailableError) as info:
                    await call
                errors.append(info.value)
        return errors

    enqueued, status = asyncio.run(calls())
    assert isinstance(enqueued, cogworker.EnqueueUnavailableError)
    assert enqueued.unknown == ("lost-1",)
    assert not isinstance(status, cogworker.EnqueueError)
    for error in (enqueued, status):
        assert "u:***@127.0.0.1:1" in str(error)
        assert "secret" not in str(error)


def test_the_factory_s_cluster_client_authenticates_as_an_acl_user_and_never_retries(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """The URL's user reaches every primary; the client re-sends nothing (no retries), and
    a Client on it enqueues."""
    cluster_client.acl_setuser(
        "clusterer", enabled=True, passwords=["+s3cret"], commands=["+@all"], keys=["~cogworker:*"],
        target_nodes=redis.RedisCluster.ALL_NODES,
    )  # fmt: skip
    try:
        url = cluster_url(local_cluster).replace("://", "://clusterer:s3cret@")
        client = connect(parse(url, "s"))
        assert isinstance(client, redis.RedisCluster)
        assert client.retry.get_retries() == 0
        whoami = client.acl_whoami(target_nodes=client.PRIMARIES)
        assert set(whoami.values()) == {"clusterer"}
        enqueuer = cogworker.Client(cogworker.Config(redis_url=url), client=client)
        assert enqueuer.enqueue_many(_Plain, [[1], [2]])
        assert cluster_client.llen("cogworker:{q:default}:queue") == 2
        enqueuer.close()
    finally:
        cluster_client.acl_deluser("clusterer", target_nodes=redis.RedisCluster.ALL_NODES)


class _Plain(cogworker.Job):
    """A job of the default queue."""

    def perform(self, number: int) -> None:
        """Nothing: only its push counts here."""


def test_a_cluster_no_node_of_which_answers_stops_a_command_with_one_line() -> None:
    """redis-py's cluster client connects when made: a command started while no node
    answers says so in one line (exit 2), where for one server a worker would wait."""
    answer = Cli("redis+cluster://127.0.0.1:1").run("stats")
    assert answer.status == 2
    assert "no node of the Redis Cluster answers" in answer.stderr
    assert "Traceback" not in answer.stderr
