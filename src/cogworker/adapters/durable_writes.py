"""Durable writes on one server or a cluster: a pipeline's writes, then WAIT on their connection.

WAIT answers how many replicas have every write *its connection* made so
far; sent on another connection it answers at once, whatever became of the
writes.  On one server the pipeline's one connection carries the writes and
the WAIT ending them (`Replication.queue_wait`).  A cluster pipeline sends
each node its part on one of the node's connections, but re-sends a
redirected command on another, which a WAIT queued on the pipeline would not
cover.  So on a cluster, with replicas asked for, the commands queued on the
pipeline (values, `command_values`) are sent here instead: grouped by the
primary owning their slot, each group through that node's own `redis.Redis`
as one pipeline ending with a WAIT, redirects followed in rounds
(`cluster_rounds`, which decides them, for this module and for asyncio's,
`async_durable_writes`; `cluster_client.perform` does their steps).  The fewest
replicas any of the WAITs reached is what the writes reached.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import redis

from cogworker.adapters import cluster_client, cluster_rounds, scripts, steps
from cogworker.adapters.cluster_rounds import Written
from cogworker.adapters.command_values import Command
from cogworker.adapters.redis_client import (
    RedisClient,
    RedisPipeline,
    is_cluster,
    outage_as_connection_error,
)
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
    planned = cluster_rounds.rounds(commands, replication)
    with outage_as_connection_error():
        return steps.driven(planned, functools.partial(cluster_client.perform, client))
