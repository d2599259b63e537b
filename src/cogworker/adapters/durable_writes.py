"""Durable writes on one server or a cluster: a pipeline's writes, then WAIT on their connection.

WAIT answers how many replicas have every write *its connection* made so
far; sent on another connection it answers at once, whatever became of the
writes.  On one server the pipeline's one connection carries the writes and
the WAIT ending them (`Replication.wait_args`).  A cluster pipeline sends
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

import attrs
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

__all__ = ["Command", "RunPipeline", "Written", "confirmed", "durable", "run", "run_on_primaries"]


def run(
    client: RedisClient, pipe: RedisPipeline, replication: Replication
) -> tuple[list[Any], Shortfall | None]:
    """Execute `pipe` (see `scripts.run_pipeline`), its writes waiting for `replication`'s
    replicas on their own connections: the writes' replies, and the shortfall, if any."""
    on_cluster = is_cluster(client)
    decided = durable(scripts.queued(pipe) if on_cluster else [], replication, on_cluster)
    with outage_as_connection_error():
        return steps.driven(decided, functools.partial(_performed, client, pipe))


@attrs.frozen
class RunPipeline:
    """Run the pipeline as `scripts.run_pipeline` does, ending it with `wait` if given:
    its replies."""

    wait: tuple[Any, ...] | None = None


def durable(
    commands: Sequence[Command], replication: Replication, on_cluster: bool
) -> steps.Steps[RunPipeline | cluster_rounds.Step, tuple[list[Any], Shortfall | None]]:
    """A pipeline's writes (`commands`, read only on a cluster) waiting for `replication`'s
    replicas: ends with their replies and the shortfall, if any (see the module).  Decided
    once for both transports; `run` and `async_durable_writes.run` do the steps."""
    if not replication.replicas:
        return (yield RunPipeline()), None
    if not on_cluster:
        return replication.split((yield RunPipeline(replication.wait_args())))
    if not commands:
        return [], None
    return (yield from cluster_rounds.rounds(commands, replication)).outcome(replication)


def _performed(
    client: RedisClient, pipe: RedisPipeline, step: RunPipeline | cluster_rounds.Step
) -> Any:
    """Do `step` with a sync client."""
    if not isinstance(step, RunPipeline):
        assert is_cluster(client)  # (only a cluster's writes take the rounds' steps)
        return cluster_client.perform(client, step)
    if step.wait is not None:
        pipe.execute_command(*step.wait)  # type: ignore[no-untyped-call]  # redis-py's
    return scripts.run_pipeline(client, pipe)


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
