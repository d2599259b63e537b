"""redis-py's cluster client as cogworker's sync code uses it, and its executor (`send`).

`ClusterClient` is a `redis.RedisCluster` whose outages are connection errors
(see `redis_client`): when made, for every command (scripts too) and every
look-up of a key's node.  A cluster's pipelines are commands as values
(`command_values.Commands`, made by `pipelines.pipeline`) which `send`
sends: each primary its part as one plain pipeline on that node's own `redis.Redis`, in the rounds
`cluster_rounds` decides (redirects followed, scripts Redis forgot loaded,
nothing sent again that may have run).  `perform` does one of those rounds'
steps; durable writes (`durable_writes`) drive the same rounds with a WAIT.
"""

from __future__ import annotations

import functools
import time
from typing import Any, assert_never

import redis
from redis.cluster import ClusterNode

from cogworker.adapters import cluster_rounds, steps
from cogworker.adapters.command_values import Command, Commands
from cogworker.adapters.redis_client import (
    UNKNOWN_OUTCOME,
    outage_as_connection_error,
    unless_outcome_unknown,
)


class ClusterClient(redis.RedisCluster):
    """A `redis.RedisCluster` whose outages are connection errors (see the module's
    docstring)."""

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

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Commands:
        """A non-transactional pipeline (`Commands`, sent by `send`), as
        `pipelines.pipeline` gives for any cluster client."""
        if transaction or shard_hint:
            raise redis.RedisClusterException("cogworker's cluster pipelines are plain ones")
        return Commands(functools.partial(send, self))


def send(client: redis.RedisCluster, commands: list[Command], raise_on_error: bool) -> list[Any]:
    """The replies of `commands` sent on `client`'s primaries (see the module's docstring);
    a connection error or a timeout raised whatever `raise_on_error` says, as one
    server's pipeline raises it."""
    if not commands:
        return []
    with outage_as_connection_error():
        written = steps.driven(cluster_rounds.rounds(commands), functools.partial(perform, client))
    return written.checked() if raise_on_error else written.replies


def perform(client: redis.RedisCluster, step: cluster_rounds.Step) -> Any:
    """Do `step` with redis-py's cluster client: its outcome (see `cluster_rounds`)."""
    nodes = client.nodes_manager
    match step:
        case cluster_rounds.Locate(None):
            return client.get_default_node()  # type: ignore[no-untyped-call]  # redis-py's
        case cluster_rounds.Locate(key):
            return client.get_node_from_key(key)  # type: ignore[no-untyped-call]  # redis-py's
        case cluster_rounds.Send(node, commands):
            try:
                return unless_outcome_unknown(_sent(client, node, commands))
            except UNKNOWN_OUTCOME:
                # The node may be gone: learn the cluster's map now, as redis-py's own
                # next command would (an outage found then is raised instead).
                nodes.initialize()
                raise
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


def _sent(client: redis.RedisCluster, node: ClusterNode, commands: list[Command]) -> list[Any]:
    """The replies of `commands` sent to `node` as one plain pipeline (errors among them)."""
    pipe = client.get_redis_connection(node).pipeline(transaction=False)
    for args, options in commands:
        pipe.execute_command(*args, **options)  # type: ignore[no-untyped-call]  # redis-py's
    return pipe.execute(raise_on_error=False)
