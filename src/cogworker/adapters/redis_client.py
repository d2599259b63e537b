"""The one type of a synchronous Redis client cogworker's stores take: one server or a cluster.

`redis.RedisCluster` is not a `redis.Redis`; the two share the commands the
stores send (single-key commands, scripts by SHA, non-transactional
pipelines, `scan_iter`, which a cluster client runs on every primary).
Code that must tell them apart asks `is_cluster`.
"""

from __future__ import annotations

from typing import TypeGuard

import redis

RedisClient = redis.Redis | redis.RedisCluster
#: A non-transactional pipeline of either (a cluster's sends each node its part).
RedisPipeline = redis.client.Pipeline | redis.cluster.ClusterPipeline


def is_cluster(client: RedisClient) -> TypeGuard[redis.RedisCluster]:
    """Whether `client` talks to a Redis Cluster."""
    return isinstance(client, redis.RedisCluster)
