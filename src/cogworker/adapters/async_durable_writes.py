"""`durable_writes` for redis.asyncio: a pipeline's writes, then WAIT on their connection.

On one server, the WAIT ends the pipeline.  On a cluster, a WAIT queued on
redis.asyncio's cluster pipeline would count the writes of whichever
connection it went on, so with replicas asked for the commands queued on the
pipeline are sent here instead, in the rounds `cluster_rounds` decides: each
primary's part on one connection of that node (`ClusterNode.execute_pipeline`
takes one for the whole part) ending with its WAIT (`async_cluster.performed`
does the steps).  On an `AsyncCluster`
it all runs in one of the client's turns (a call holds at most one
connection of each node, see `async_cluster`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import redis.asyncio

from cogworker.adapters import async_cluster, cluster_rounds, scripts, steps
from cogworker.adapters.cluster_rounds import Written
from cogworker.adapters.command_values import Command
from cogworker.adapters.durable_writes import RunPipeline, durable
from cogworker.adapters.redis_client import AsyncRedisClient, AsyncRedisPipeline
from cogworker.adapters.replication import Replication, Shortfall, unless_short

__all__ = ["Command", "Written", "confirmed", "run", "run_on_primaries"]


async def run(
    client: AsyncRedisClient, pipe: AsyncRedisPipeline, replication: Replication
) -> tuple[list[Any], Shortfall | None]:
    """`durable_writes.run` for an asyncio client and its pipeline (on a cluster, in one of
    its turns if it takes turns)."""
    if not isinstance(client, redis.asyncio.RedisCluster):
        decided = durable([], replication, on_cluster=False)
        return await steps.driven_async(decided, functools.partial(_performed, client, pipe))
    decided = durable(scripts.queued(pipe), replication, on_cluster=True)
    perform = functools.partial(_performed, client, pipe)
    return await async_cluster.in_a_turn(
        client, functools.partial(steps.driven_async, decided, perform)
    )


async def _performed(
    client: AsyncRedisClient, pipe: AsyncRedisPipeline, step: RunPipeline | cluster_rounds.Step
) -> Any:
    """Do `step` with an asyncio client."""
    if not isinstance(step, RunPipeline):
        assert isinstance(client, redis.asyncio.RedisCluster)  # (see durable_writes)
        return await async_cluster.performed(client, step)
    if step.wait is not None:
        pipe.execute_command(*step.wait)
    return await scripts.run_pipeline_async(client, pipe)


async def confirmed(
    client: AsyncRedisClient, pipe: AsyncRedisPipeline, replication: Replication
) -> list[Any]:
    """`run`'s replies; NotReplicatedError if the writes reached too few replicas."""
    return unless_short(await run(client, pipe, replication))


async def run_on_primaries(
    client: redis.asyncio.RedisCluster, commands: Sequence[Command], replication: Replication
) -> Written:
    """Send `commands`, each primary's with a WAIT for `replication` on one connection."""
    planned = cluster_rounds.rounds(commands, replication)
    perform = functools.partial(async_cluster.performed, client)
    driven = functools.partial(steps.driven_async, planned, perform)
    return await async_cluster.in_a_turn(client, driven)
