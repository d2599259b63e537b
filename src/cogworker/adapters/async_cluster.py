"""redis.asyncio's cluster client as cogworker's asyncio code uses it (`connect_cluster_async`).

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

And as with `redis_client.ClusterClient`, a command that may have run is never
sent again.  redis.asyncio's cluster client sends one again only on its
`retry`'s tries, and `connect_cluster_async` gives it none: after a connection
error or a timeout a command raises it, and a pipeline leaves that node's
unanswered commands failed (those answered keep their replies), resending only
the redirected ones (MOVED, ASK, TRYAGAIN: they did not run).  But with
`raise_on_error=False` it answers the connection error as one reply among the
others, where one server's pipeline raises it: `AsyncClusterPipeline` raises it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

import attrs
import redis
import redis.asyncio
import redis.asyncio.cluster

from cogworker.adapters.redis_client import outage_as_connection_error, unless_outcome_unknown

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

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Run one command in a turn."""
        command = functools.partial(super().execute_command, *args, **kwargs)
        return await in_turn(self.turns, command)

    def pipeline(
        self, transaction: Any | None = None, shard_hint: Any | None = None
    ) -> redis.asyncio.cluster.ClusterPipeline:
        """A pipeline executed in a turn (a `shard_hint` refused, as redis-py's is)."""
        if shard_hint:
            raise redis.RedisClusterException("shard_hint is deprecated in cluster mode")
        # (redis-py's stubs call the class abstract; redis-py makes its own alike)
        return AsyncClusterPipeline(self, transaction)  # type: ignore[abstract]


class AsyncClusterPipeline(redis.asyncio.cluster.ClusterPipeline):
    """A pipeline of an `AsyncCluster`, executed in one of its turns."""

    def __init__(self, client: AsyncCluster, transaction: Any | None = None) -> None:
        super().__init__(client, transaction)
        self.turns = client.turns

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> Any:
        """Send the queued commands (each node its part) in a turn.

        A connection error or a timeout met by any node is raised, whatever
        `raise_on_error` says (see `unless_outcome_unknown`); redis-py's would be
        a reply among the others.
        """
        run = super().execute
        replies = await in_turn(self.turns, lambda: run(raise_on_error, allow_redirections))
        return unless_outcome_unknown(replies)
