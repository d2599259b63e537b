"""A `redis.RedisCluster` of the application's own, handed to cogworker (`Client(client=...)`,
a store): its pipelines are cogworker's (`adapters/pipelines.py`), sent by the same executor
as the connection factory's client's, so a command whose node dropped its connection is not
sent again (redis-py's own cluster pipeline sends it again: a job move applied twice)."""

from __future__ import annotations

import pytest
import redis

from cogworker.adapters import pipelines, scripts
from tests.support.redis_server import RedisServer

#: A key of `default`'s slot.
COUNTER = "cogworker:{q:default}:probe"


def raw_client(node: RedisServer) -> redis.RedisCluster:
    """A cluster client as an application makes one: redis-py's defaults."""
    return redis.RedisCluster(host="127.0.0.1", port=node.port)


def test_a_raw_cluster_client_s_pipeline_sends_nothing_again(own_node: RedisServer) -> None:
    """The node closes the connection after an INCR ran and before the pipeline's last
    reply: the pipeline raises the connection error and the INCR counted once."""
    client = raw_client(own_node)
    node = client.get_node_from_key(COUNTER)
    pipe = pipelines.pipeline(client)
    pipe.incr(COUNTER)
    # Killing itself, a connection gets this reply, then is closed: the PING gets none.
    pipe.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no", target_nodes=node)
    pipe.execute_command("PING", target_nodes=node)
    with pytest.raises(redis.ConnectionError):
        scripts.run_pipeline(client, pipe)
    assert client.get(COUNTER) == b"1"
    client.close()


def test_redis_py_s_own_cluster_pipeline_is_refused_with_what_to_use(
    own_node: RedisServer,
) -> None:
    """redis-py's cluster pipeline keeps what it queued to itself: handed to cogworker it is
    refused, naming what makes a cluster's pipeline, rather than run as if empty."""
    client = raw_client(own_node)
    pipe = client.pipeline(transaction=False)
    pipe.incr(COUNTER)
    with pytest.raises(TypeError, match=r"pipelines\.pipeline\(client\)"):
        scripts.run_pipeline(client, pipe)
    assert client.get(COUNTER) is None
    client.close()
