"""The one type of a synchronous Redis client cogworker's stores take: one server or a cluster.

`redis.RedisCluster` is not a `redis.Redis`; the two share the commands the
stores send (single-key commands, scripts by SHA, non-transactional
pipelines, `scan_iter`, which a cluster client runs on every primary).
Code that must tell them apart asks `is_cluster`.  A cluster's pipeline refuses
some methods whatever the keys' slots (`mget` among them): `queue_mget` queues
the command by name, which it routes by its keys like any other.

The connection factory builds every cluster client as a `ClusterClient`: a
`redis.RedisCluster` that raises the two errors redis-py's cluster client
gives for an outage, `SlotNotCoveredError` (a slot without a primary, mid-
failover) and `RedisClusterUnreachableError` (no node answers), as
`redis.ConnectionError`.  They are not `redis.RedisError`s, and every loop of
a worker backs off on `RedisError`: one of them would end the thread, and its
process with it.  Like a connection error, they leave unknown whether the
command ran, and like one they are never re-sent here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeGuard

import redis
from redis.cluster import ClusterNode, ClusterPipeline
from redis.exceptions import RedisClusterUnreachableError, SlotNotCoveredError

RedisClient = redis.Redis | redis.RedisCluster
#: A non-transactional pipeline of either (a cluster's sends each node its part).
RedisPipeline = redis.client.Pipeline | redis.cluster.ClusterPipeline

#: What redis-py's cluster client raises when it can't reach a slot's primary.
CLUSTER_OUTAGES = (SlotNotCoveredError, RedisClusterUnreachableError)


@contextmanager
def outage_as_connection_error() -> Iterator[None]:
    """Raise a cluster outage (`CLUSTER_OUTAGES`) met inside as `redis.ConnectionError`."""
    try:
        yield
    except CLUSTER_OUTAGES as error:
        raise redis.ConnectionError(f"{type(error).__name__}: {error}") from error


class ClusterClient(redis.RedisCluster):
    """A `redis.RedisCluster` whose outages are connection errors (see the module's
    docstring): when made, for every command (scripts too), every pipeline's execution and
    every look-up of a key's node."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with outage_as_connection_error():  # it connects when made
            super().__init__(*args, **kwargs)

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Send one command (to the nodes its keys or `target_nodes` name)."""
        with outage_as_connection_error():
            return super().execute_command(*args, **kwargs)  # type: ignore[no-untyped-call]

    def get_node_from_key(self, key: Any, replica: bool = False) -> ClusterNode | None:
        """The node holding `key`'s slot (its primary, or a replica if `replica`)."""
        with outage_as_connection_error():
            node: ClusterNode | None = super().get_node_from_key(key, replica)  # type: ignore[no-untyped-call]
            return node

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        """A pipeline of this cluster whose `execute` raises an outage as a connection error."""
        pipe = super().pipeline(transaction, shard_hint)  # type: ignore[no-untyped-call]
        # The same object, with `execute` wrapped: no state is added, and redis-py's own
        # construction of the pipeline (its many arguments) stays redis-py's.
        pipe.__class__ = ClusterClientPipeline
        assert isinstance(pipe, ClusterClientPipeline)
        return pipe


class ClusterClientPipeline(ClusterPipeline):
    """`ClusterClient.pipeline`'s pipelines."""

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Send the queued commands, each node its part in one round trip."""
        with outage_as_connection_error():
            return super().execute(raise_on_error)


def is_cluster(client: RedisClient) -> TypeGuard[redis.RedisCluster]:
    """Whether `client` talks to a Redis Cluster."""
    return isinstance(client, redis.RedisCluster)


def queue_mget(pipe: Any, names: Sequence[str]) -> None:
    """Queue `MGET names` (keys of one slot) on a pipeline of either client."""
    pipe.execute_command("MGET", *names)
