"""The one way cogworker connects to Redis: a `RedisTarget` in, a client out.

Every path goes through `connect`: the worker, the client, the dashboard,
the start-up checks, the embedded-Redis probe (the pulse reads the same
target, see `liveness`).  It speaks TLS, authenticates as an ACL user, and
behind Sentinel asks the sentinels for the primary at every new
connection, so after a failover the next connection reaches the promoted
replica; a connection still open to a demoted primary is dropped at its
first READONLY answer (redis-py's `SentinelManagedConnection`).
`connect_async` does the same for redis.asyncio (see `sentinel`).
On a Redis Cluster (`RedisTarget.cluster`) `connect` builds a
`redis.RedisCluster` from the start-up nodes, and `connect_async` a
`redis.asyncio.RedisCluster` (`connect_cluster_async`, see `async_cluster`).

redis-py re-sends a command after a connection error by default.  A job
move that timed out may still have been applied, so a blind re-send could
apply it twice: cogworker's clients never retry on their own.  Every job
move is a script that checks where the job is first, and the caller's loop
decides when to try again (with back-off).  On a cluster the same holds:
redis-py's cluster client follows MOVED and ASK redirects and waits out
TRYAGAIN (a refused command did not run, so sending it where the slot lives
can't apply it twice), and re-sends nothing after a connection error or a
timeout (`retry` with no retries).  Its outages (a slot without a primary
mid-failover, no node answering, a topology refresh finding slots no node
serves) are raised as connection errors, made or not
(`cluster_client.ClusterClient`).
"""

from __future__ import annotations

from typing import Any, Literal

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.asyncio.sentinel
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.retry import Retry

from cogworker.adapters.async_cluster import AsyncCluster
from cogworker.adapters.cluster_client import ClusterClient
from cogworker.adapters.per_thread import PinnedClusterClient
from cogworker.adapters.redis_client import (
    CLUSTER_REDIS_PY,
    SOCKET_TIMEOUT,
    AsyncRedisClient,
    RedisClient,
    redis_py_version,
)
from cogworker.adapters.redis_target import RedisTarget, Tls
from cogworker.adapters.sentinel import (
    BlockingSentinelPool,
    PrimaryConnection,
    PrimarySSLConnection,
    SentinelPool,
    SentinelSet,
    ThreadedSentinels,
)
from cogworker.exceptions import ConfigError

CONNECT_TIMEOUT = 2.0
#: How long a blocking fetch waits before looking again (bounds shutdown latency).
BLOCK_SECONDS = 1.0


#: How a client's commands get their connection: checked out of a pool for
#: each command; one connection of its own, for one busy thread (no checkout,
#: with its check for stray data, per command); or one kept for each thread
#: that sends commands, for a client many threads share: on a cluster the client
#: pins them (`PinnedClusterClient`), on one server it is pooled and each thread
#: takes its own client of it (`per_thread.thread_clients`).
Connections = Literal["pooled", "single", "per-thread"]


def connect(
    target: RedisTarget,
    *,
    max_connections: int | None = None,
    connections: Connections = "pooled",
) -> RedisClient:
    """A client for `target` that never re-sends a command and never waits forever.

    A cluster's client keeps a pool per node (`max_connections` each); with "per-thread"
    connections, each thread also keeps one per node (`PinnedClusterClient`); one
    server's client stays pooled (see `Connections`)."""
    if target.cluster:
        pinned = connections == "per-thread"
        return connect_cluster(target, max_connections=max_connections, pinned=pinned)
    client = redis.Redis(
        connection_pool=_pool(target, max_connections),
        single_connection_client=connections == "single",
    )
    client.auto_close_connection_pool = True  # closing the client closes its pool
    return client


def connect_cluster(
    target: RedisTarget,
    *,
    max_connections: int | None = None,
    timeout: float = SOCKET_TIMEOUT,
    pinned: bool = False,
) -> ClusterClient:
    """A `redis.RedisCluster` of `target`'s start-up nodes: `connect`'s rules on every node
    (`timeout` for each command and connect, `SOCKET_TIMEOUT` by default), a `pinned`
    connection per thread and node if asked.  It connects when made:
    `redis.ConnectionError` if no node answers."""
    options = cluster_options(target, timeout=timeout)
    if max_connections is not None:
        options["max_connections"] = max_connections
    return (PinnedClusterClient if pinned else ClusterClient)(
        startup_nodes=[ClusterNode(host, port) for host, port in target.cluster],  # type: ignore[no-untyped-call]
        **options,
    )


def cluster_options(target: RedisTarget, *, timeout: float = SOCKET_TIMEOUT) -> dict[str, Any]:
    """A cluster client's options for `target`: `connect`'s rules on every node, `timeout`
    for each command and connect; the same for redis-py and redis.asyncio.  A
    `ConfigError` when the installed redis-py is older than the cluster clients need."""
    if redis_py_version() < CLUSTER_REDIS_PY:
        oldest = ".".join(map(str, CLUSTER_REDIS_PY))
        raise ConfigError(
            f"a Redis Cluster ({target.described()}) needs redis-py {oldest} or later; "
            f"this is redis-py {redis.__version__} (docs/redis-cluster.md)"
        )
    return {
        **_socket_options(),
        "socket_timeout": timeout,
        "socket_connect_timeout": min(timeout, CONNECT_TIMEOUT),
        **tls_options(target.tls),
        "ssl": target.tls is not None,
        "health_check_interval": 30,
        "decode_responses": False,
        "username": target.username,
        "password": target.password,
    }


def dedicated(target: RedisTarget, *, fallback: RedisClient) -> RedisClient:
    """A client with a connection of its own, for a thread that sends a command after
    another all day (a worker's fetcher, its acker): it skips the pool's checkout on every
    command (bench/README.md).  If Redis went away just now, `fallback` will do."""
    try:
        return connect(target, connections="single")
    except redis.RedisError:
        return fallback


def _socket_options(*, unix: bool = False) -> dict[str, Any]:
    """Timeouts, no retries, and TCP keepalive unless `unix` (a unix socket has none, and
    redis-py's unix connections refuse the option)."""
    options: dict[str, Any] = {
        "socket_timeout": SOCKET_TIMEOUT,
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "retry": Retry(NoBackoff(), 0),
    }
    if not unix:
        options["socket_keepalive"] = True
    return options


def _pool(target: RedisTarget, max_connections: int | None) -> redis.ConnectionPool:
    options: dict[str, Any] = {
        **_socket_options(unix=target.path is not None),
        **tls_options(target.tls),
        "health_check_interval": 30,
        "decode_responses": False,
        "max_connections": max_connections,
        "db": target.db,
        "username": target.username,
        "password": target.password,
    }
    if target.sentinels is not None:
        sentinels = SentinelSet(target, {**_socket_options(), **tls_options(target.tls)})
        master = target.sentinels.master
        primary = PrimarySSLConnection if target.tls is not None else PrimaryConnection
        return SentinelPool(master, sentinels, connection_class=primary, **options)  # type: ignore[no-untyped-call]
    if target.path is not None:  # (a unix:// URL has no TLS)
        return redis.ConnectionPool(
            connection_class=UnixDomainSocketConnection, path=target.path, **options
        )
    kind = SSLConnection if target.tls is not None else Connection
    return redis.ConnectionPool(
        connection_class=kind, host=target.host, port=target.port, **options
    )


def tls_options(tls: Tls | None) -> dict[str, Any]:
    """redis-py's connection options for `tls` (none without TLS)."""
    if tls is None:
        return {}
    return {
        "ssl_ca_certs": tls.ca_file,
        "ssl_certfile": tls.cert_file,
        "ssl_keyfile": tls.key_file,
        "ssl_cert_reqs": "none" if tls.verify == "none" else "required",
        "ssl_check_hostname": tls.verify == "full",
    }


#: Connections an asyncio client opens at most (redis.asyncio's own pool refuses a
#: command beyond its limit, where this one makes the task wait for a free one).
ASYNC_CONNECTIONS = 50


def connect_async(
    target: RedisTarget, *, max_connections: int = ASYNC_CONNECTIONS
) -> AsyncRedisClient:
    """`connect` for asyncio code: the same timeouts, TLS, credentials and Sentinel, no
    command ever re-sent, and at most `max_connections` open; a task finding them all busy
    waits for one, however long the queue of tasks ahead of it.

    The wait is not bounded by a timeout of its own: every command holding a connection
    is (`SOCKET_TIMEOUT`), so a Redis that stopped answering frees them all; a bound on
    the wait would only turn a burst of enqueues into "Redis is unavailable" errors."""
    if target.cluster:
        return connect_cluster_async(target, max_connections=max_connections)
    options: dict[str, Any] = {
        **_socket_options(unix=target.path is not None),
        **tls_options(target.tls),
        "retry": AsyncRetry(NoBackoff(), 0),
        "health_check_interval": 30,
        "decode_responses": False,
        "db": target.db,
        "username": target.username,
        "password": target.password,
        "max_connections": max_connections,
        "timeout": None,
    }
    if target.sentinels is not None:
        return redis.asyncio.Redis.from_pool(_async_sentinel_pool(target, options))
    if target.path is not None:
        options.update(connection_class=redis.asyncio.UnixDomainSocketConnection, path=target.path)
    else:
        kind = redis.asyncio.SSLConnection if target.tls is not None else redis.asyncio.Connection
        options.update(connection_class=kind, host=target.host, port=target.port)
    return redis.asyncio.Redis.from_pool(redis.asyncio.BlockingConnectionPool(**options))


def connect_cluster_async(
    target: RedisTarget, *, max_connections: int = ASYNC_CONNECTIONS
) -> AsyncCluster:
    """`connect_cluster` for asyncio code: a `redis.asyncio.RedisCluster` of `target`'s
    start-up nodes with the same rules, at most `max_connections` calls at once (a task
    finding them busy waits, as with `connect_async`), and a slot without a primary or no
    node answering raised as `redis.ConnectionError` (see `async_cluster`).  It connects at
    its first command, not here.  Durable writes (`min_replicas`) send each primary's
    writes and their WAIT on one connection of that node (`async_durable_writes`)."""
    return AsyncCluster(
        startup_nodes=[
            redis.asyncio.cluster.ClusterNode(host, port) for host, port in target.cluster
        ],
        **{**cluster_options(target), "retry": AsyncRetry(NoBackoff(), 0)},
        max_connections=max_connections,
    )


def _async_sentinel_pool(
    target: RedisTarget, options: dict[str, Any]
) -> redis.asyncio.ConnectionPool:
    """The primary's connections, through the sentinels (asked at every connect)."""
    assert target.sentinels is not None
    sentinels = ThreadedSentinels(
        SentinelSet(target, {**_socket_options(), **tls_options(target.tls)})
    )
    sentinel = redis.asyncio.sentinel
    primary = (
        sentinel.SentinelManagedSSLConnection
        if target.tls is not None
        else sentinel.SentinelManagedConnection
    )
    pool: redis.asyncio.ConnectionPool = BlockingSentinelPool(  # type: ignore[no-untyped-call]
        target.sentinels.master, sentinels, connection_class=primary, **options
    )
    return pool
