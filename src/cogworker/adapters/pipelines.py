"""A non-transactional pipeline of any client: what every adapter queues its commands on.

On one server it is redis-py's own pipeline: its commands go on one
connection as they are.  On a cluster it is commands as values
(`command_values`) that the cluster's executor sends (`cluster_client.send`,
`async_cluster.send`), whatever made the client: redis-py's own cluster
pipeline sends a command again whose node failed, and a job move sent again
would apply twice.  `run_paged` runs a script over many calls, a page of
them per round trip.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import redis
import redis.asyncio

from cogworker.adapters import async_cluster, cluster_client, scripts
from cogworker.adapters.command_values import AsyncCommands, Commands
from cogworker.adapters.redis_client import (
    AsyncRedisClient,
    AsyncRedisPipeline,
    RedisClient,
    RedisPipeline,
)
from cogworker.adapters.replies import as_bytes


def pipeline(client: RedisClient) -> RedisPipeline:
    """A non-transactional pipeline of `client` (see the module's docstring)."""
    if isinstance(client, redis.RedisCluster):
        return Commands(functools.partial(cluster_client.send, client))
    return client.pipeline(transaction=False)


def pipeline_async(client: AsyncRedisClient) -> AsyncRedisPipeline:
    """`pipeline` for an asyncio client (on an `AsyncCluster`, sent in one of its turns)."""
    if isinstance(client, redis.asyncio.RedisCluster):
        return AsyncCommands(functools.partial(async_cluster.send, client))
    return client.pipeline(transaction=False)


#: One run of a script: its keys and its arguments.
Call = tuple[Sequence[scripts.KeyOrArg], Sequence[scripts.KeyOrArg]]


def run_paged(
    client: RedisClient,
    script: scripts.LuaScript,
    calls: Iterable[Call],
    *,
    page: int,
    counted: bytes,
) -> int:
    """`script` run once per call, `page` runs pipelined per round trip: how many of them
    answered `counted` (a migration's per-entry moves, say)."""
    done, batch = 0, []
    for call in calls:
        batch.append(call)
        if len(batch) == page:
            done += _count_answers(client, script, batch, counted)
            batch = []
    return done + _count_answers(client, script, batch, counted)


def _count_answers(
    client: RedisClient, script: scripts.LuaScript, batch: list[Call], counted: bytes
) -> int:
    if not batch:
        return 0
    pipe = pipeline(client)
    for keys, args in batch:
        script.queue(pipe, keys, args)
    return sum(as_bytes(reply) == counted for reply in scripts.run_pipeline(client, pipe))
