"""The asyncio cluster client (`connect_cluster_async`) on a one-node cluster of the test's
own, its connection closed after a command ran and before its reply: the command is never
sent again, and the caller gets the connection error, as from one server.

A command sent again after a connection error may run twice: a job pushed
twice.  The sync client's pipeline needed a fix for it (now the cluster executor's
rounds, tests/cluster/test_cluster_failover.py); these hold the asyncio one to the same.
"""

from __future__ import annotations

import asyncio

import pytest
import redis

import cogworker
from cogworker.adapters.async_cluster import AsyncCluster
from cogworker.adapters.connection import connect_cluster_async
from tests.support.redis_server import RedisServer

#: A key of `default`'s slot.
COUNTER = "cogworker:{q:default}:probe"
#: Adds 1 to the counter, then answers more than `SMALL_REPLIES` lets a client be sent.
INCR_THEN_TOO_LONG = "redis.call('INCR', KEYS[1]) return string.rep('x', 100000)"
#: A normal client's output limit (bytes) small enough for that reply to close its
#: connection, once the command has run, and big enough for every other reply here.
SMALL_REPLIES = "normal 4096 0 0"


def async_cluster(node: RedisServer) -> AsyncCluster:
    """The connection factory's asyncio client of the one-node cluster `node`."""
    config = cogworker.Config(redis_url=f"redis+cluster://127.0.0.1:{node.port}/0")
    return connect_cluster_async(config.redis_target())


def counter_of(node: RedisServer) -> bytes | None:
    """The counter's value, read by a client of the test's own."""
    with node.client() as admin:
        value: bytes | None = admin.get(COUNTER)
        return value


@pytest.mark.parametrize("raise_on_error", [False, True])
def test_a_pipeline_whose_connection_dropped_raises_and_sends_nothing_again(
    own_node: RedisServer, raise_on_error: bool
) -> None:
    """The node closes the connection after an INCR ran and before the pipeline's last
    reply: the pipeline raises the connection error, whatever `raise_on_error` says, and
    sends none of its commands again (the INCR counted once)."""

    async def send() -> None:
        async with async_cluster(own_node) as client:
            await client.initialize()
            node = client.get_node_from_key(COUNTER)
            pipe = client.pipeline(transaction=False)
            pipe.incr(COUNTER)
            # Killing itself, a connection gets this reply, then is closed: the PING
            # gets none.
            kill = ("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no")
            pipe.execute_command(*kill, target_nodes=node)
            pipe.execute_command("PING", target_nodes=node)
            with pytest.raises(redis.ConnectionError):
                await pipe.execute(raise_on_error=raise_on_error)

    asyncio.run(send())
    assert counter_of(own_node) == b"1"


def test_a_command_whose_connection_dropped_raises_and_is_not_sent_again(
    own_node: RedisServer,
) -> None:
    """A script that ran (its INCR applied) and whose reply the node refuses to send, closing
    the connection: the call raises the connection error and the script ran once (a
    client retrying on connection errors would have run it again)."""

    async def send() -> None:
        async with async_cluster(own_node) as client:
            assert await client.get(COUNTER) is None  # connected: the topology read
            with own_node.client() as admin:
                admin.config_set("client-output-buffer-limit", SMALL_REPLIES)
            with pytest.raises(redis.ConnectionError):
                await client.eval(INCR_THEN_TOO_LONG, 1, COUNTER)

    asyncio.run(send())
    assert counter_of(own_node) == b"1"
