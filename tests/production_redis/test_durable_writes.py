"""Durable writes (`min_replicas`): enqueues and outcomes followed by WAIT, against a
primary with a replica behind Sentinel, and a lone server that has none.

The failover itself, with and without `min_replicas`, is in test_failover.py.
"""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.replies import as_bytes
from tests.production_redis import drain
from tests.production_redis.jobs import Drain, Unique
from tests.production_redis.servers import SentinelTopology
from tests.support.processes import CogworkerProcess
from tests.support.redis_server import RedisServerFactory

APP = "tests.production_redis.jobs:config"
MIX = drain.Mix(plain=40, retried=4, scheduled=4, dead=2, unique=2)


def test_enqueues_wait_for_the_replica_and_succeed(
    sentinel_topology: SentinelTopology, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """With min_replicas=1 in the URL every kind of enqueue returns once the replica has
    it, and a worker whose outcomes wait too drains the mix with no shortfall logged."""
    url = sentinel_topology.url() + "?min_replicas=1&replica_timeout=3"
    client = cogworker.Client(cogworker.Config(redis_url=url))
    drain.enqueue(client, MIX)
    client.close()
    with sentinel_topology.replica.client() as replica:
        assert replica.llen(keys.queue("default")) + replica.zcard(keys.schedule("default")) > 0
    env = {"COGWORKER_TEST_REDIS_URL": redis_url, "COGWORKER_WORK_REDIS_URL": url}
    with CogworkerProcess(["work", APP], directory=tmp_path, env=env) as worker:
        drain.wait_drained(rc, MIX, worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()
    assert "replicas-short" not in worker.log_text()


@pytest.mark.parametrize("how", ["one", "many", "scheduled", "unique"])
def test_an_enqueue_no_replica_confirms_raises_naming_the_counts(
    redis_url: str, rc: redis.Redis, how: str
) -> None:
    """A lone server has no replica: the enqueue raises EnqueueNotReplicatedError saying
    0 of 1, naming the jid as unknown; the job is on the server all the same."""
    config = cogworker.Config(redis_url=redis_url, min_replicas=1, replica_timeout=0.05)
    with pytest.raises(cogworker.EnqueueNotReplicatedError) as raised:
        _enqueue(cogworker.Client(config), how)
    error = raised.value
    assert (error.reached, error.required, error.unknown) == (0, 1, ("durable-1",))
    assert "reached 0 of the 1 replicas Config.min_replicas asks for within 0.05 s" in str(error)
    assert "job durable-1 may or may not have been enqueued" in str(error)
    entries = [
        *rc.lrange(keys.queue("default"), 0, -1),
        *rc.zrange(keys.schedule("default"), 0, -1),
    ]
    assert any(b"durable-1" in as_bytes(entry) for entry in entries)
    assert pickle.loads(pickle.dumps(error)).reached == 0


def _enqueue(client: cogworker.Client, how: str) -> None:
    if how == "one":
        client.enqueue(Drain, 1, jid="durable-1")
    elif how == "many":
        client.enqueue_many(Drain, [[1]], jids=["durable-1"])
    elif how == "scheduled":
        client.enqueue_in(60, Drain, 1, jid="durable-1")
    else:
        client.enqueue(Unique, "key", jid="durable-1")


def test_the_async_client_raises_the_same(redis_url: str) -> None:
    """AsyncClient's enqueue waits for the replicas too, and raises the same error."""
    config = cogworker.Config(redis_url=redis_url, min_replicas=1, replica_timeout=0.05)

    async def enqueue() -> None:
        async with cogworker.AsyncClient(config) as client:
            await client.enqueue(Drain, 1, jid="durable-1")

    with pytest.raises(cogworker.EnqueueNotReplicatedError, match="reached 0 of the 1"):
        asyncio.run(enqueue())


def test_a_script_redis_forgot_is_covered_by_the_wait_sent_again(
    sentinel_topology: SentinelTopology,
) -> None:
    """After SCRIPT FLUSH the push is loaded and sent again, and so is the WAIT after it:
    the enqueue returns once the replica has the job sent the second time."""
    url = sentinel_topology.url() + "?min_replicas=1&replica_timeout=3"
    client = cogworker.Client(cogworker.Config(redis_url=url))
    try:
        client.redis.script_flush()
        jid = client.enqueue(Drain, 1, jid="after-flush")
    finally:
        client.close()
    with sentinel_topology.replica.client() as replica:
        queued = replica.lrange(keys.queue("default"), 0, -1)
    assert any(jid is not None and jid.encode() in entry for entry in queued)


def test_a_worker_without_its_replicas_logs_once_and_carries_on(
    redis_url: str, rc: redis.Redis, tmp_path: Path
) -> None:
    """A worker whose outcomes reach no replica logs the shortfall once (not per job),
    saying what it risks, and drains everything."""
    client = cogworker.Client(cogworker.Config(redis_url=redis_url))
    drain.enqueue(client, MIX)
    client.close()
    url = redis_url + "?min_replicas=1&replica_timeout=0.01"
    env = {"COGWORKER_TEST_REDIS_URL": redis_url, "COGWORKER_WORK_REDIS_URL": url}
    with CogworkerProcess(["work", APP], directory=tmp_path, env=env) as worker:
        drain.wait_drained(rc, MIX, worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()
    log = worker.log_text()
    assert log.count("reason=replicas-short") == 1, log
    assert "reached 0 of the 1 replicas" in log
    assert "a failover now may run jobs finished meanwhile again" in log


def test_a_user_without_wait_is_told_the_rule_to_add(
    redis_server_factory: RedisServerFactory,
) -> None:
    """An ACL user that may not run WAIT: the enqueue is refused naming `+wait`."""
    server = redis_server_factory()
    with server.client() as admin:
        admin.execute_command("ACL", "SETUSER", "nowait", "on", ">pw", "~*", "+@all", "-wait")
    url = f"redis://nowait:pw@127.0.0.1:{server.port}/0?min_replicas=1"
    client = cogworker.Client(cogworker.Config(redis_url=url))
    with pytest.raises(cogworker.EnqueueRefusedError, match=r"add \+wait to the user's rules"):
        client.enqueue(Drain, 1)
    client.close()
