"""Clients for many threads that each send one command at a time (`Client`'s): a
connection kept for each thread, instead of the pool's checkout around every command.

A pooled client checks a connection out and back in around every command,
probing it for stray data each time, a good part of an enqueue's cost
(bench/README.md has the figure).  A thread sends one command at a time, so
it can keep one connection instead: on one server `thread_clients` gives each
thread a plain `redis.Redis` of its own (`PerThread`), holding a connection
taken from the shared client's pool; on a Redis Cluster, `PinnedClusterClient`
keeps one per thread and node.

redis-py's cluster client checks a connection out of the node's pool the
same way.  `PinnedClusterClient` keeps one per thread and node instead:
redis-py sends a single command on `get_redis_connection(node).connection`
when it is set, and only then checks one out of the node's pool.  Here that
method gives the calling thread's own client of the node, holding a
connection of its own: made apart from the pool, so redis-py's hand-back
after each command leaves it be (the pool owns only what it handed out).
Everything else is redis-py's: the command's routing, MOVED, ASK, TRYAGAIN,
and a connection error, which disconnects it; the thread's next command
connects it again.  A forked child makes its own (the parent's sockets are
never used there); `close` closes every thread's.  Pipelines, and a node
client's own pipelines, still take the node pool's connections.
(Sending a script straight to its keys' node would save as much again, but
only through redis-py's private command loop, which changes between the
releases cogworker allows.)
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import redis
from redis.cluster import ClusterNode
from redis.connection import AbstractConnection

from cogworker.adapters.cluster_client import ClusterClient
from cogworker.adapters.redis_client import RedisClient

T = TypeVar("T")


class PerThread(Generic[T]):
    """A value of the calling thread's own, made by `make` at the thread's first call; a
    forked child makes its own (its parent's sockets are never used there)."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._local = threading.local()

    def __call__(self) -> T:
        """The calling thread's value."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.value, local.pid = self._make(), os.getpid()
        value: T = local.value
        return value


def thread_clients(shared: RedisClient) -> PerThread[RedisClient]:
    """The calling thread's client of `shared`'s Redis (see the module's docstring);
    closing `shared` closes every thread's connection."""
    return PerThread(functools.partial(_own_client, shared))


def _own_client(shared: RedisClient) -> RedisClient:
    """A plain client of `shared`'s server whose commands go over a connection of its
    own, or `shared` itself on a cluster (a `PinnedClusterClient` pins per thread and
    node).  Its pipelines take their connections from the shared pool."""
    if isinstance(shared, redis.RedisCluster):
        return shared
    # Takes a connection out of the pool for good; a thread's client gives it back
    # when the thread ends and the client is collected.
    return redis.Redis(connection_pool=shared.connection_pool, single_connection_client=True)


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


class PinnedClusterClient(ClusterClient):
    """A `ClusterClient` whose single commands go over the calling thread's own connection
    to each node (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # redis-py sends commands (COMMAND) while it is made: the connections come first.
        self._pinned = PinnedConnections()
        super().__init__(*args, **kwargs)

    def get_redis_connection(self, node: ClusterNode) -> redis.Redis:
        """The calling thread's client of `node`, with a connection of its own."""
        shared: redis.Redis = super().get_redis_connection(node)
        return self._pinned.client_of(node.name, shared)

    def close(self) -> None:
        """Close the pools of every node and every thread's own connections."""
        super().close()
        self._pinned.close()
