"""The one way cogworker connects to Redis: a `RedisTarget` in, a client out.

Every path goes through `connect`: the worker, the client, the dashboard,
the start-up checks, the embedded-Redis probe (the pulse reads the same
target, see `liveness`).  It speaks TLS, authenticates as an ACL user, and
behind Sentinel asks the sentinels for the primary at every new
connection, so after a failover the next connection reaches the promoted
replica; a connection still open to a demoted primary is dropped at its
first READONLY answer (redis-py's `SentinelManagedConnection`).

redis-py re-sends a command after a connection error by default.  A job
move that timed out may still have been applied, so a blind re-send could
apply it twice: cogworker's clients never retry on their own.  Every job
move is a script that checks where the job is first, and the caller's loop
decides when to try again (with back-off).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Literal

import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.retry import Retry
from redis.sentinel import (
    MasterNotFoundError,
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
)

from cogworker.adapters.redis_target import RedisTarget, Tls

#: Longer than any blocking command cogworker issues (see BLOCK_SECONDS).
SOCKET_TIMEOUT = 5.0
CONNECT_TIMEOUT = 2.0
#: How long a blocking fetch waits before looking again (bounds shutdown latency).
BLOCK_SECONDS = 1.0


class SentinelsUnreachableError(MasterNotFoundError):
    """No sentinel answered: an outage (or a wrong address), waited out like one."""


class UnknownMasterError(MasterNotFoundError):
    """The sentinels answered, and none monitors a master of that name: a setting to fix."""


class SentinelRefusedError(MasterNotFoundError):
    """The sentinels refused the sentinel credentials: a setting to fix."""


class PerThreadRedis(redis.Redis):
    """A client whose single commands go over a connection kept for the calling thread.

    A pooled client checks a connection out and back in around every command,
    probing it for stray data each time, a good part of an enqueue's cost
    (bench/README.md has the figure).  A thread sends one command at a
    time, so it can keep one connection instead.  Pipelines still take
    theirs from the shared pool.
    A forked child opens its own (the pool notices the new pid).
    """

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


#: How a client's commands get their connection: checked out of a pool for
#: each command; one connection of its own, for one busy thread (no checkout,
#: with its check for stray data, per command); or one kept for each thread
#: that sends commands (`PerThreadRedis`), for a client many threads share.
Connections = Literal["pooled", "single", "per-thread"]


def connect(
    target: RedisTarget,
    *,
    max_connections: int | None = None,
    connections: Connections = "pooled",
) -> redis.Redis:
    """A client for `target` that never re-sends a command and never waits forever."""
    kind = PerThreadRedis if connections == "per-thread" else redis.Redis
    client = kind(
        connection_pool=_pool(target, max_connections),
        single_connection_client=connections == "single",
    )
    client.auto_close_connection_pool = True  # closing the client closes its pool
    return client


def _socket_options() -> dict[str, Any]:
    return {
        "socket_timeout": SOCKET_TIMEOUT,
        "socket_connect_timeout": CONNECT_TIMEOUT,
        "socket_keepalive": True,
        "retry": Retry(NoBackoff(), 0),
    }


def _pool(target: RedisTarget, max_connections: int | None) -> redis.ConnectionPool:
    options: dict[str, Any] = {
        **_socket_options(),
        **tls_options(target.tls),
        "health_check_interval": 30,
        "decode_responses": False,
        "max_connections": max_connections,
        "db": target.db,
        "username": target.username,
        "password": target.password,
    }
    if target.sentinels is not None:
        sentinels = SentinelSet(target)
        master = target.sentinels.master
        primary = PrimarySSLConnection if target.tls is not None else PrimaryConnection
        return SentinelConnectionPool(master, sentinels, connection_class=primary, **options)  # type: ignore[no-untyped-call]
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


class PrimaryConnection(SentinelManagedConnection):
    """A connection to the primary behind Sentinel that asks for it at every (re)connect.

    redis-py's asks only when its pool hands it out; one that reconnects by
    itself (a single-connection client's, a `PerThreadRedis` thread's) went
    back to the old address forever after a failover.
    """

    def _connect_retry(self) -> None:
        # redis-py's asks the sentinels here, then connects: the asking moved below.
        if not self._sock:
            self.connect_check_health(
                check_health=self.connection_pool.check_connection, retry_socket_connect=False
            )

    def connect_check_health(
        self, check_health: bool = True, retry_socket_connect: bool = True
    ) -> None:
        """Connect (if not connected) to the server the sentinels call the primary now."""
        if not self._sock:
            self.host, self.port = self.connection_pool.get_master_address()
        super().connect_check_health(
            check_health=check_health, retry_socket_connect=retry_socket_connect
        )


class PrimarySSLConnection(PrimaryConnection, SSLConnection):
    """`PrimaryConnection` over TLS."""


class SentinelSet(Sentinel):
    """redis-py's Sentinel, whose failure to find the primary says why, naming the setting."""

    def __init__(self, target: RedisTarget) -> None:
        assert target.sentinels is not None
        sentinels = target.sentinels
        options = {
            **_socket_options(),
            **tls_options(target.tls),
            "ssl": target.tls is not None,
            "username": sentinels.username,
            "password": sentinels.password,
        }
        super().__init__(sentinels.addresses, sentinel_kwargs=options)
        self.target = target

    def discover_master(self, service_name: str) -> tuple[str, int]:
        """The primary's address, from the first sentinel that sees it up."""
        unreachable: list[str] = []
        refused: list[str] = []
        known: set[str] = set()
        for index, sentinel in enumerate(self.sentinels):
            where = _address_of(sentinel)
            try:
                masters: dict[str, dict[str, Any]] = sentinel.sentinel_masters()  # type: ignore[assignment]
            except (redis.AuthenticationError, redis.ResponseError) as error:
                refused.append(f"{where} ({error})")
                continue
            except (redis.ConnectionError, redis.TimeoutError) as error:
                unreachable.append(f"{where} ({error})")
                continue
            known.update(masters)
            state = masters.get(service_name)
            if state and self.check_master_state(state, service_name):  # type: ignore[no-untyped-call]
                # The sentinel that answered is asked first next time.
                self.sentinels[0], self.sentinels[index] = sentinel, self.sentinels[0]
                return state["ip"], int(state["port"])
        raise self._not_found(service_name, known, unreachable, refused)

    def _not_found(
        self, master: str, known: set[str], unreachable: list[str], refused: list[str]
    ) -> MasterNotFoundError:
        where = self.target.described()
        if refused and not known:
            return SentinelRefusedError(
                f"{where}: the sentinels refused the sentinel credentials "
                f"(sentinel_username / sentinel_password): {'; '.join(refused)}"
            )
        if unreachable and not known:
            return SentinelsUnreachableError(
                f"{where}: no sentinel answers: {'; '.join(unreachable)}"
            )
        if master not in known:
            names = ", ".join(repr(name) for name in sorted(known)) or "none"
            return UnknownMasterError(
                f"{where}: the sentinels monitor no master named {master!r} (they know {names})"
            )
        return MasterNotFoundError(
            f"{where}: the sentinels see master {master!r} down (a failover may be under way)"
        )


def _address_of(sentinel: redis.Redis) -> str:
    options = sentinel.connection_pool.connection_kwargs
    return f"{options.get('host')}:{options.get('port')}"


#: Connections an asyncio client opens at most (redis.asyncio's own pool refuses a
#: command beyond its limit, where this one makes the task wait for a free one).
ASYNC_CONNECTIONS = 50


def connect_async(
    target: RedisTarget, *, max_connections: int = ASYNC_CONNECTIONS
) -> redis.asyncio.Redis:
    """`connect` for asyncio code: the same timeouts, TLS and credentials, no command ever
    re-sent, and at most `max_connections` open; a task finding them all busy waits for one
    (a ConnectionError after `SOCKET_TIMEOUT`).  Not behind Sentinel yet (a ValueError)."""
    if target.sentinels is not None:
        raise ValueError(
            f"{target.described()}: the asyncio client doesn't reach Redis through Sentinel "
            "yet; enqueue with cogworker.Client there"
        )
    options: dict[str, Any] = {
        **_socket_options(),
        **tls_options(target.tls),
        "retry": AsyncRetry(NoBackoff(), 0),
        "health_check_interval": 30,
        "decode_responses": False,
        "db": target.db,
        "username": target.username,
        "password": target.password,
    }
    if target.path is not None:
        options.update(connection_class=redis.asyncio.UnixDomainSocketConnection, path=target.path)
    else:
        kind = redis.asyncio.SSLConnection if target.tls is not None else redis.asyncio.Connection
        options.update(connection_class=kind, host=target.host, port=target.port)
    pool = redis.asyncio.BlockingConnectionPool(
        max_connections=max_connections, timeout=SOCKET_TIMEOUT, **options
    )
    return redis.asyncio.Redis.from_pool(pool)
