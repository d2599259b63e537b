"""redis.asyncio's cluster client as cogworker's asyncio code uses it (`connect_cluster_async`),
and its executor (`send`).

`AsyncCluster` is `redis.asyncio.RedisCluster` with two differences, both so
that a cluster behaves as one server does behind `connect_async`:

* A slot without a primary (mid-failover) and a cluster no node of which
  answers raise `redis.ConnectionError`.  redis-py raises
  `SlotNotCoveredError` and `RedisClusterUnreachableError`, which are not
  `redis.RedisError`: the callers' handling of a Redis that went away
  (`RedisUnavailableError`, a worker's back-off) would miss them.
* At most `max_connections` calls (commands, pipelines) run at once, and a
  task finding them all busy waits for its turn.  redis.asyncio's cluster
  nodes refuse a connection beyond their limit (`MaxConnectionsError`),
  where one server's blocking pool makes the task wait.  A call holds at
  most one connection of each node, so with as many turns as each node has
  connections no node runs out.  A call made inside a call (a pipeline
  sending a redirected command again) runs in its caller's turn.

And as with `cluster_client.ClusterClient`, a command that may have run is
never sent again.  redis.asyncio's cluster client sends one again only on its
`retry`'s tries, and `connect_cluster_async` gives it none: after a connection
error or a timeout a command raises it.  Its pipelines are commands as values
(`command_values.AsyncCommands`) which `send` sends in the rounds
`cluster_rounds` decides, each primary's part on one connection of that node,
in one turn (`pipelines.pipeline_async` makes them): a connection error or a timeout raised whatever
`raise_on_error` says, as one server's pipeline raises it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar, assert_never

import attrs
import redis
import redis.asyncio
import redis.asyncio.cluster

from cogworker.adapters import cluster_rounds, steps
from cogworker.adapters.command_values import AsyncCommands, Command
from cogworker.adapters.redis_client import (
    UNKNOWN_OUTCOME,
    outage_as_connection_error,
    unless_outcome_unknown,
)

T = TypeVar("T")

#: The turns whose one the running task holds (None: none), so a call inside a call
#: doesn't wait for a second turn (with every turn held by a waiting caller, it never
#: would get one).
_HELD: ContextVar[Turns | None] = ContextVar("cogworker_cluster_turn", default=None)


@attrs.define
class Turns:
    """How many calls of one client may run at once, the rest waiting for a turn."""

    limit: int
    _free: asyncio.Semaphore = attrs.field(
        default=attrs.Factory(lambda self: asyncio.Semaphore(self.limit), takes_self=True),
        init=False,
    )

    @contextlib.asynccontextmanager
    async def taken(self) -> AsyncIterator[None]:
        """Hold a turn while the block runs (the caller's, inside a call of the same
        client)."""
        if _HELD.get() is self:
            yield
            return
        async with self._free:
            held = _HELD.set(self)
            try:
                yield
            finally:
                _HELD.reset(held)


async def in_turn(turns: Turns, call: Callable[[], Awaitable[T]]) -> T:
    """`call()` awaited in a turn, its cluster outages raised as `redis.ConnectionError`."""
    async with turns.taken():
        with outage_as_connection_error():
            return await call()


class AsyncCluster(redis.asyncio.RedisCluster):
    """`redis.asyncio.RedisCluster` taking turns and raising outages as connection errors
    (see the module); `max_connections` is each node's limit and the client's turns."""

    def __init__(self, *, max_connections: int, **options: Any) -> None:
        super().__init__(max_connections=max_connections, **options)
        self.turns = Turns(max_connections)

    def pipeline(  # type: ignore[override]  # commands as values, not redis-py's pipeline
        self, transaction: Any | None = None, shard_hint: Any | None = None
    ) -> AsyncCommands:
        """A non-transactional pipeline (`AsyncCommands`, sent by `send` in a turn), as
        `pipelines.pipeline_async` gives for any asyncio cluster client."""
        if transaction or shard_hint:
            raise redis.RedisClusterException("cogworker's cluster pipelines are plain ones")
        return AsyncCommands(functools.partial(send, self))

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Run one command in a turn."""
        command = functools.partial(super().execute_command, *args, **kwargs)
        return await in_turn(self.turns, command)


async def send(
    client: redis.asyncio.RedisCluster, commands: list[Command], raise_on_error: bool
) -> list[Any]:
    """`cluster_client.send` for an asyncio cluster client: `commands`' replies, sent on
    its primaries in one of its turns if it takes turns."""
    if not commands:
        return []
    planned = cluster_rounds.rounds(commands)
    perform = functools.partial(performed, client)
    written = await in_a_turn(client, lambda: steps.driven_async(planned, perform))
    return written.checked() if raise_on_error else written.replies


async def in_a_turn(client: redis.asyncio.RedisCluster, call: Callable[[], Awaitable[T]]) -> T:
    """`call()` awaited in one of `client`'s turns if it takes turns, its cluster outages
    raised as connection errors."""
    if isinstance(client, AsyncCluster):
        return await in_turn(client.turns, call)
    with outage_as_connection_error():
        return await call()


async def performed(client: redis.asyncio.RedisCluster, step: cluster_rounds.Step) -> Any:
    """Do `step` with redis.asyncio's cluster client: its outcome (see `cluster_rounds`)."""
    nodes = client.nodes_manager
    match step:
        case cluster_rounds.Locate(key):
            await client.initialize()  # (made, it connects at its first call: this one)
            return client.get_default_node() if key is None else client.get_node_from_key(key)
        case cluster_rounds.Send(node, commands):
            try:
                return unless_outcome_unknown(await _sent(node, commands))
            except UNKNOWN_OUTCOME:
                await nodes.initialize()  # the node may be gone (see `cluster_client.perform`)
                raise
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
