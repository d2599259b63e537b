"""`durable_writes` for redis.asyncio: a pipeline's writes, then WAIT on their connection.

On one server, the WAIT ends the pipeline.  On a cluster, a WAIT queued on
redis.asyncio's cluster pipeline would count the writes of whichever
connection it went on, so with replicas asked for the commands queued on the
pipeline are sent here instead, in the rounds `cluster_rounds` decides: each
primary's part on one connection of that node (`ClusterNode.execute_pipeline`
takes one for the whole part) ending with its WAIT.  On an `AsyncCluster`
it all runs in one of the client's turns (a call holds at most one
connection of each node, see `async_cluster`).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, assert_never

import redis.asyncio
import redis.asyncio.cluster

from cogworker.adapters import cluster_rounds, scripts
from cogworker.adapters.async_cluster import AsyncCluster, in_turn
from cogworker.adapters.cluster_rounds import Command, Written
from cogworker.adapters.redis_client import (
    AsyncRedisClient,
    AsyncRedisPipeline,
    outage_as_connection_error,
)
from cogworker.adapters.replication import Replication, Shortfall, unless_short

__all__ = ["Command", "Written", "confirmed", "run", "run_on_primaries"]

T = TypeVar("T")


async def run(
    client: AsyncRedisClient, pipe: AsyncRedisPipeline, replication: Replication
) -> tuple[list[Any], Shortfall | None]:
    """`durable_writes.run` for an asyncio client and its pipeline."""
    if not replication.replicas:
        return await scripts.run_pipeline_async(client, pipe), None
    if not isinstance(client, redis.asyncio.RedisCluster):
        replication.queue_wait(pipe)
        return replication.split(await scripts.run_pipeline_async(client, pipe))
    commands = scripts.queued(pipe)
    await pipe.reset()  # type: ignore[no-untyped-call]  # redis-py's
    if not commands:
        return [], None
    return (await run_on_primaries(client, commands, replication)).outcome(replication)


async def confirmed(
    client: AsyncRedisClient, pipe: AsyncRedisPipeline, replication: Replication
) -> list[Any]:
    """`run`'s replies; NotReplicatedError if the writes reached too few replicas."""
    return unless_short(await run(client, pipe, replication))


async def run_on_primaries(
    client: redis.asyncio.RedisCluster, commands: Sequence[Command], replication: Replication
) -> Written:
    """Send `commands`, each primary's with a WAIT for `replication` on one connection."""
    steps = cluster_rounds.rounds(commands, replication)
    perform = functools.partial(_perform, client)
    return await _in_a_turn(client, lambda: cluster_rounds.driven_async(steps, perform))


async def _in_a_turn(client: redis.asyncio.RedisCluster, call: Callable[[], Awaitable[T]]) -> T:
    """`call()` awaited in one of `client`'s turns if it takes turns, its cluster outages
    raised as connection errors."""
    if isinstance(client, AsyncCluster):
        return await in_turn(client.turns, call)
    with outage_as_connection_error():
        return await call()


async def _perform(client: redis.asyncio.RedisCluster, step: cluster_rounds.Step) -> Any:
    """Do `step` with redis.asyncio's cluster client: its outcome (see `cluster_rounds`)."""
    nodes = client.nodes_manager
    match step:
        case cluster_rounds.Locate(args):
            # (private, as `scripts.queued`'s reads: redis.asyncio has no public one)
            return nodes.get_node_from_slot(await client._determine_slot(*args))
        case cluster_rounds.Send(node, commands):
            return await _sent(node, commands)
        case cluster_rounds.Moved(error):
            await nodes.move_slot(error)
            return nodes.get_node_from_slot(error.slot_id)
        case cluster_rounds.Asked(error):
            return cluster_rounds.asked_node(client, error)
        case cluster_rounds.Reload(script):
            return await client.script_load(script.source)
        case cluster_rounds.Pause(seconds):
            return await asyncio.sleep(seconds)
        case _:
            assert_never(step)


async def _sent(node: redis.asyncio.cluster.ClusterNode, commands: list[Command]) -> list[Any]:
    """The replies of `commands` sent to `node` on one of its connections (errors among
    them; a connection error met sending raised)."""
    queued = [
        redis.asyncio.cluster.PipelineCommand(position, *args, **options)
        for position, (args, options) in enumerate(commands)
    ]
    await node.execute_pipeline(queued)
    return [command.result for command in queued]
