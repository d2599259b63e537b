"""Durable writes on one server or a cluster: a pipeline's writes, then WAIT on their connection.

WAIT answers how many replicas have every write *its connection* made so
far; sent on another connection it answers at once, whatever became of the
writes.  On one server the pipeline's one connection carries the writes and
the WAIT ending them (`Replication.queue_wait`).  A cluster pipeline sends
each node its part on one of the node's connections, but re-sends a
redirected command on another, which a WAIT queued on the pipeline would not
cover.  So on a cluster, with replicas asked for, the commands queued on the
pipeline are sent here instead: grouped by the primary owning their slot,
each group through that node's own `redis.Redis` as one pipeline ending with
a WAIT, redirects followed in rounds (`cluster_rounds`, which decides them,
for this module and for asyncio's, `async_durable_writes`).  The fewest
replicas any of the WAITs reached is what the writes reached.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any, assert_never

import redis

from cogworker.adapters import cluster_rounds, scripts
from cogworker.adapters.cluster_rounds import Command, Written
from cogworker.adapters.redis_client import RedisClient, RedisPipeline, is_cluster
from cogworker.adapters.replication import Replication, Shortfall, unless_short

__all__ = ["Command", "Written", "confirmed", "run", "run_on_primaries"]


def run(
    client: RedisClient, pipe: RedisPipeline, replication: Replication
) -> tuple[list[Any], Shortfall | None]:
    """Execute `pipe` (see `scripts.run_pipeline`), its writes waiting for `replication`'s
    replicas on their own connections: the writes' replies, and the shortfall, if any."""
    if not replication.replicas:
        return scripts.run_pipeline(client, pipe), None
    if not is_cluster(client):
        replication.queue_wait(pipe)
        return replication.split(scripts.run_pipeline(client, pipe))
    commands = scripts.queued(pipe)
    pipe.reset()
    if not commands:
        return [], None
    return run_on_primaries(client, commands, replication).outcome(replication)


def confirmed(client: RedisClient, pipe: RedisPipeline, replication: Replication) -> list[Any]:
    """`run`'s replies; NotReplicatedError if the writes reached too few replicas."""
    return unless_short(run(client, pipe, replication))


def run_on_primaries(
    client: redis.RedisCluster, commands: Sequence[Command], replication: Replication
) -> Written:
    """Send `commands`, each primary's with a WAIT for `replication` on one connection."""
    steps = cluster_rounds.rounds(commands, replication)
    return cluster_rounds.driven(steps, functools.partial(_perform, client))


def _perform(client: redis.RedisCluster, step: cluster_rounds.Step) -> Any:
    """Do `step` with redis-py's cluster client: its outcome (see `cluster_rounds`)."""
    nodes = client.nodes_manager
    match step:
        case cluster_rounds.Locate(args):
            slot = client.determine_slot(*args)
            if slot is None:  # (CLIENT TRACKING only, never in a pipeline that moves jobs)
                raise ValueError(f"{args[0]!r} names no key to send it by")
            return nodes.get_node_from_slot(slot)
        case cluster_rounds.Send(node, commands):
            pipe = client.get_redis_connection(node).pipeline(transaction=False)
            for args, options in commands:
                pipe.execute_command(*args, **options)  # type: ignore[no-untyped-call]  # redis-py's
            return pipe.execute(raise_on_error=False)
        case cluster_rounds.Moved(error):
            nodes.move_slot(error)
            return nodes.get_node_from_slot(error.slot_id)
        case cluster_rounds.Asked(error):
            return cluster_rounds.asked_node(client, error)
        case cluster_rounds.Reload(script):
            return client.script_load(script.source)
        case cluster_rounds.Pause(seconds):
            return time.sleep(seconds)
        case _:
            assert_never(step)
