"""Clients for many threads that each send one command at a time (`Client`'s): a
connection kept for each thread, instead of the pool's checkout around every command.

A pooled client checks a connection out and back in around every command,
probing it for stray data each time, a good part of an enqueue's cost
(bench/README.md has the figure).  A thread sends one command at a time, so
it can keep one connection instead: `PerThreadRedis` on one server,
`PinnedClusterClient` on a Redis Cluster, one per thread and node.

redis-py's cluster client also spends about twice a plain client's CPU
on a command (docs/redis-cluster.md, "Cost on a cluster"): besides the
checkout, it resolves the command's routing policy, its keys and its node
through several layers.  `PinnedClusterClient` takes two shortcuts, neither
changing what is sent where or what an error does:

* **A connection per thread and node.**  redis-py sends a single command on
  `get_redis_connection(node).connection` when it is set, and only then
  checks one out of the node's pool.  Here that method gives the calling
  thread's own client of the node, holding a connection of its own: made
  apart from the pool, so redis-py's hand-back after each command leaves it
  be (the pool owns only what it handed out).  A connection error
  disconnects it, as redis-py does any; the thread's next command connects
  it again.  A forked child makes its own (the parent's sockets are never
  used there); `close` closes every thread's.  Pipelines, and a node
  client's own pipelines, still take the node pool's connections.
* **A script goes straight to its keys' node.**  `EVALSHA` with keys (every
  cogworker script) is routed by the slot of its keys, as redis-py routes
  it, without its policy look-up; the node's send, with MOVED, ASK, TRYAGAIN
  and connection errors handled as for any command, is redis-py's own
  (`_execute_command`), and an error it raises is raised as redis-py's
  command loop raises it when it retries nothing.  Keys of several slots, a
  pending topology refresh, named target nodes: redis-py's whole way.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import redis
from redis.cluster import ClusterNode, _error_to_raise
from redis.connection import AbstractConnection
from redis.crc import key_slot

from cogworker.adapters.redis_client import ClusterClient, outage_as_connection_error


class PerThreadRedis(redis.Redis):
    """A client of one server whose single commands go over a connection kept for the
    calling thread; pipelines take theirs from the shared pool.  A forked child opens
    its own (the pool notices the new pid)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pinned = threading.local()

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """Run one command on this thread's own connection."""
        return self._own_client().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def _own_client(self) -> redis.Redis:
        pinned = self._pinned
        if getattr(pinned, "pid", None) != os.getpid():
            # Takes a connection out of the pool for good; a thread's client
            # gives it back when the thread ends and the client is collected.
            pinned.client = redis.Redis(
                connection_pool=self.connection_pool, single_connection_client=True
            )
            pinned.pid = os.getpid()
        client: redis.Redis = pinned.client
        return client


class PinnedConnections:
    """Every thread's client of each node, with a connection of its own (see the module's
    docstring); the open ones, to close them all."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._made: weakref.WeakSet[AbstractConnection] = weakref.WeakSet()

    def client_of(self, name: str, shared: redis.Redis) -> redis.Redis:
        """The calling thread's client of node `name`, whose shared client is `shared`."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # a new thread, or a forked child
            local.clients, local.pid = {}, os.getpid()
        clients: dict[str, redis.Redis] = local.clients
        client = clients.get(name)
        if client is None or client.connection_pool is not shared.connection_pool:
            # First use, or redis-py made the node a new pool (a topology refresh).
            if client is not None:
                self._drop(client)
            client = clients[name] = self._pinned(shared)
        return client

    def _pinned(self, shared: redis.Redis) -> redis.Redis:
        """A client of `shared`'s node and pool with a connection the pool doesn't own."""
        pool = shared.connection_pool
        client = redis.Redis(connection_pool=pool)
        client.response_callbacks = shared.response_callbacks
        connection = pool.connection_class(**pool.connection_kwargs)
        client.connection = connection
        with self._lock:
            self._made.add(connection)
        return client

    def _drop(self, client: redis.Redis) -> None:
        connection, client.connection = client.connection, None
        if connection is not None:
            connection.disconnect()  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Disconnect every thread's connections (a thread's next command connects again)."""
        with self._lock:
            made = list(self._made)
        for connection in made:
            connection.disconnect()  # type: ignore[no-untyped-call]


#: The command routed by its keys' slot without redis-py's policy look-up.
_SCRIPT = "EVALSHA"


class PinnedClusterClient(ClusterClient):
    """A `ClusterClient` whose single commands go over the calling thread's own connection
    to each node, and whose scripts go straight to their keys' node (see the module's
    docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # redis-py sends commands (COMMAND) while it is made: the connections come first.
        self._pinned = PinnedConnections()
        super().__init__(*args, **kwargs)

    def get_redis_connection(self, node: ClusterNode) -> redis.Redis:
        """The calling thread's client of `node`, with a connection of its own."""
        shared: redis.Redis = super().get_redis_connection(node)
        return self._pinned.client_of(node.name, shared)

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Send one command: a script to its keys' node, any other as redis-py routes it."""
        slot = None if kwargs else self._script_slot(args)
        if slot is None:
            return super().execute_command(*args, **kwargs)
        with outage_as_connection_error():
            node = self.nodes_manager.get_node_from_slot(slot)
            try:
                return self._execute_command(node, *args)  # type: ignore[no-untyped-call]
            except Exception as error:
                raise self._given_up(error)  # noqa: B904 (its cause is redis-py's to set)

    def _script_slot(self, args: tuple[Any, ...]) -> int | None:
        """The slot of a script's keys (`EVALSHA sha numkeys key...`), or None when redis-py
        should route the command: not a script, no keys, keys of several slots, a topology
        refresh pending (redis-py's loop runs it first), retries (the connection factory
        asks for none), replicas read from."""
        if (
            len(args) < 4
            or args[0] != _SCRIPT
            or self.nodes_manager._refresh_requested
            or self.retry.get_retries()
            or self.read_from_replicas
            or self.load_balancing_strategy is not None
            or _SCRIPT in self.result_callbacks
        ):
            return None
        keys = args[3 : 3 + int(args[2])]
        slots = {key_slot(self.encoder.encode(key)) for key in keys}  # type: ignore[no-untyped-call]
        return slots.pop() if len(slots) == 1 else None

    def _given_up(self, error: Exception) -> Exception:
        """What redis-py's command loop raises for `error` when it retries nothing: the
        error, or the cluster unreachable once the last refresh found no node; its error
        metric recorded."""
        if hasattr(error, "connection"):
            self._record_error_metric(
                error=error, connection=error.connection, retry_attempts=0, is_internal=False
            )
        given_up: Exception = _error_to_raise(
            self.nodes_manager._last_refresh_unreachable_args, error
        )
        return given_up

    def close(self) -> None:
        """Close the pools of every node and every thread's own connections."""
        super().close()
        self._pinned.close()
