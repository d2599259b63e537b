"""The one type of a Redis client cogworker's stores take: one server or a cluster, and the
same for redis.asyncio (`AsyncRedisClient`).

`redis.RedisCluster` is not a `redis.Redis`; the two share the commands the
stores send (single-key commands, scripts by SHA, non-transactional
pipelines, `scan_iter`, which a cluster client runs on every primary).
Code that must tell them apart asks `is_cluster`.  A cluster's pipeline refuses
some methods whatever the keys' slots (`mget` among them): `queue_mget` queues
the command by name, which it routes by its keys like any other.  The asyncio
twins (`redis.asyncio.RedisCluster`, its `ClusterPipeline`) share all of this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

import redis
import redis.asyncio
import redis.asyncio.cluster

RedisClient = redis.Redis | redis.RedisCluster
#: A non-transactional pipeline of either (a cluster's sends each node its part).
RedisPipeline = redis.client.Pipeline | redis.cluster.ClusterPipeline
AsyncRedisClient = redis.asyncio.Redis | redis.asyncio.RedisCluster
AsyncRedisPipeline = redis.asyncio.client.Pipeline | redis.asyncio.cluster.ClusterPipeline


def is_cluster(client: RedisClient) -> TypeGuard[redis.RedisCluster]:
    """Whether `client` talks to a Redis Cluster."""
    return isinstance(client, redis.RedisCluster)


def queue_mget(pipe: Any, names: Sequence[str]) -> None:
    """Queue `MGET names` (keys of one slot) on a pipeline of either client."""
    pipe.execute_command("MGET", *names)
