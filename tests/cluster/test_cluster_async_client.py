"""AsyncClient on the real local cluster: the factory's redis.asyncio cluster client, enqueues
on queues of two primaries drained by a real worker, scripts reloaded on every primary after
SCRIPT FLUSH, calls beyond the connection limit waiting their turn, and a close reaching
every node."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio

import cogworker
from cogworker.adapters import scripts
from cogworker.adapters.connection import connect_async, connect_cluster_async
from cogworker.adapters.redis_target import parse
from cogworker.app import default_clients
from tests.cluster import jobs
from tests.cluster.test_cluster_drain import (
    MIX,
    assert_each_ran_once,
    cluster_url,
    enqueue_both,
    twice,
)
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.support.clients import BlockingAsyncClient
from tests.support.cluster import LocalCluster
from tests.support.processes import CogworkerProcess, wait_until

#: The worker's APP: `jobs.config`, the shortcuts configured from `$COGWORKER_REDIS_URL`.
SHORTCUTS_APP = "tests.cluster.shortcuts_app:config"
#: How many links the chain of async jobs has.
CHAIN = 6
#: A unique lock in each queue's slot: `default` and `critical` live on different primaries.
LOCKS = (
    "cogworker:{q:default}:unique:app.Send:default:abc",
    "cogworker:{q:critical}:unique:app.Send:critical:abc",
)


@pytest.fixture
def configured(local_cluster: LocalCluster) -> Iterator[cogworker.Config]:
    """`cogworker.configure` with the cluster (statuses tracked), undone after the test."""
    config = cogworker.Config(redis_url=cluster_url(local_cluster), track_status=True)
    cogworker.configure(config)
    yield config
    default_clients.default_client().close()
    default_clients._default = None


async def enqueue_batch_and_shortcuts() -> tuple[str | None, str | None]:
    """A job keeping its result, a batch of both queues, an `aperform_async` and the start
    of a chain of async jobs enqueueing their next (`jobs.ChainAsync`, 6 links), through
    the configured config: the result's jid and the shortcut's."""
    config = default_clients.default_client().config
    async with cogworker.AsyncClient(config) as client:
        doubled = await client.enqueue(jobs.Doubles, 21)
        async with client.batch(on_success=jobs.BatchDone) as batch:
            await batch.enqueue(jobs.CriticalDrain, -1)
            await batch.enqueue(Drain, -2)
        await client.enqueue(jobs.ChainAsync, CHAIN - 1)
    return doubled, await jobs.CriticalDrain.aperform_async(-3)


def test_an_async_client_s_jobs_on_two_primaries_are_drained_each_once(
    configured: cogworker.Config,
    cluster_client: redis.RedisCluster,
    rc: redis.Redis,
    redis_url: str,
    tmp_path: Path,
) -> None:
    """Plain, bulk, scheduled and unique jobs on both queues, a kept result, a batch of both
    queues and a shortcut's job, all sent by AsyncClients, and async jobs enqueueing their
    next with the shortcut in the worker: each runs once (a retried one twice), the result
    and status read back through an AsyncClient."""
    client = BlockingAsyncClient(configured)
    enqueue_both(client)
    doubled, shortcut = asyncio.run(enqueue_batch_and_shortcuts())
    assert doubled is not None
    assert shortcut is not None
    command = ["work", SHORTCUTS_APP, "--processes", "1"]
    assert configured.redis_url is not None
    env = {"COGWORKER_TEST_REDIS_URL": redis_url, "COGWORKER_REDIS_URL": configured.redis_url}
    with CogworkerProcess(command, directory=tmp_path, env=env) as supervisor:
        drain.wait_drained(rc, twice(MIX), supervisor)
        wait_until(lambda: rc.hlen("runs:chain") == CHAIN, 30, message=supervisor.log_tail)
        assert client.result(doubled, timeout=30) == 42
        assert client.status(doubled) == "complete"
        wait_until(lambda: rc.hlen("runs:batch_done") == 1, 30, message=supervisor.log_tail)
        wait_until(lambda: client.status(shortcut) == "complete", 30, message=supervisor.log_tail)
        assert supervisor.terminate(60.0) == 0, supervisor.log_tail()
    client.close()
    assert "Traceback" not in supervisor.log_text()
    assert_each_ran_once(rc, cluster_client)
    assert set(drain.runs(rc, "chain").values()) == {1}


def test_the_factory_s_async_cluster_client_authenticates_as_an_acl_user_and_never_retries(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """The URL's user reaches every primary through redis.asyncio's cluster client, which
    re-sends nothing (no retries); an AsyncClient on it enqueues."""
    cluster_client.acl_setuser(
        "clusterer", enabled=True, passwords=["+s3cret"], commands=["+@all"], keys=["~cogworker:*"],
        target_nodes=redis.RedisCluster.ALL_NODES,
    )  # fmt: skip
    url = cluster_url(local_cluster).replace("://", "://clusterer:s3cret@")

    async def enqueued() -> list[str | None]:
        client = connect_async(parse(url, "s"))
        assert isinstance(client, redis.asyncio.RedisCluster)
        assert client.retry.get_retries() == 0
        whoami = await client.acl_whoami(target_nodes=client.PRIMARIES)
        assert set(whoami.values()) == {"clusterer"}
        async with cogworker.AsyncClient(cogworker.Config(redis_url=url), client=client) as sender:
            return await sender.enqueue_many(jobs.CriticalDrain, [[1], [2]])

    try:
        assert all(asyncio.run(enqueued()))
        assert cluster_client.llen("cogworker:{q:critical}:queue") == 2
    finally:
        cluster_client.acl_deluser("clusterer", target_nodes=redis.RedisCluster.ALL_NODES)


def test_the_first_use_after_script_flush_loads_the_script_on_every_primary(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """After SCRIPT FLUSH on every primary, an AsyncClient's first push (NOSCRIPT) loads the
    script on every primary and is applied once; so is a pipeline of scripts on two
    primaries, each call run again once."""
    config = cogworker.Config(redis_url=cluster_url(local_cluster))
    cluster_client.execute_command("SCRIPT FLUSH")  # on every primary

    async def pushed_then_locked() -> list[object]:
        async with cogworker.AsyncClient(config) as client:
            await client.enqueue(jobs.CriticalDrain, 1)
            cluster_client.execute_command("SCRIPT FLUSH")
            pipe = client.redis.pipeline(transaction=False)
            for number, lock in enumerate(LOCKS):
                scripts.TAKE_LOCK.queue(pipe, (lock,), (f"jid-{number}", 60_000))
            return await scripts.run_pipeline_async(client.redis, pipe)

    assert asyncio.run(pushed_then_locked()) == [1, 1]
    assert cluster_client.llen("cogworker:{q:critical}:queue") == 1
    assert [cluster_client.get(lock) for lock in LOCKS] == [b"jid-0", b"jid-1"]
    for node in local_cluster.primaries():
        with node.client() as primary:
            assert primary.script_exists(scripts.TAKE_LOCK.sha) == [True]


def test_more_calls_at_once_than_connections_wait_their_turn(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """With two connections per node, forty enqueues at once on two queues all land:
    the calls beyond the limit wait for a turn instead of failing."""
    url = cluster_url(local_cluster)

    async def enqueued() -> list[str | None]:
        client = connect_cluster_async(parse(url, "s"), max_connections=2)
        async with cogworker.AsyncClient(cogworker.Config(redis_url=url), client=client) as sender:
            calls = [
                sender.enqueue(kind, n) for n in range(20) for kind in (Drain, jobs.CriticalDrain)
            ]
            return await asyncio.gather(*calls)

    assert all(asyncio.run(enqueued()))
    assert cluster_client.llen("cogworker:{q:default}:queue") == 20
    assert cluster_client.llen("cogworker:{q:critical}:queue") == 20


def test_a_call_made_inside_a_call_runs_in_its_caller_s_turn(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """With one turn, EXISTS of keys on two primaries (a command redis-py splits by slot and
    sends as a pipeline from inside itself) answers instead of waiting for a second turn
    forever."""
    for lock in LOCKS:
        cluster_client.set(lock, "jid")

    async def counted() -> int:
        client = connect_cluster_async(parse(cluster_url(local_cluster), "s"), max_connections=1)
        try:
            counting = client.execute_command("EXISTS", *LOCKS)
            return int(await asyncio.wait_for(counting, timeout=30))
        finally:
            await client.aclose()

    assert asyncio.run(counted()) == len(LOCKS)


def client_ids(local_cluster: LocalCluster) -> list[set[int]]:
    """The ids of the clients connected to each primary (but the one asking)."""
    found = []
    for node in local_cluster.primaries():
        with node.client() as primary:
            asking = primary.client_id()
            found.append({int(entry["id"]) for entry in primary.client_list()} - {asking})
    return found


def test_closing_an_async_client_closes_its_connections_to_every_node(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """An AsyncClient that used queues of two primaries holds connections to both; once
    closed, none of them is left on any primary."""
    config = cogworker.Config(redis_url=cluster_url(local_cluster))
    before = client_ids(local_cluster)

    async def used_then_closed() -> list[set[int]]:
        client = cogworker.AsyncClient(config)
        await client.enqueue(Drain, 1)
        await client.enqueue(jobs.CriticalDrain, 2)
        during = client_ids(local_cluster)
        await client.aclose()
        return [now - old for now, old in zip(during, before, strict=True)]

    opened = asyncio.run(used_then_closed())
    assert sum(1 for ids in opened if ids) >= 2, opened

    def left_open() -> list[set[int]]:
        return [ids & now for ids, now in zip(opened, client_ids(local_cluster), strict=True)]

    wait_until(lambda: not any(left_open()), 10, message=lambda: f"still connected: {left_open()}")
