"""Sentinel for `connection`: finding the primary, and saying why when it can't be found.

The sentinels are asked each in turn; the first that sees the master up
names it, and the failures are sorted by `MasterSearch` into one error
naming the setting (an outage, a refusal of the sentinel credentials, a
master name they don't monitor).  redis.asyncio's clients ask through
the same code, on a worker thread (`ThreadedSentinels`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import redis
import redis.asyncio
import redis.asyncio.sentinel
import redis.sentinel
from redis.connection import SSLConnection
from redis.sentinel import MasterNotFoundError, Sentinel, SentinelManagedConnection

from cogworker.adapters.redis_target import Address, RedisTarget


class SentinelsUnreachableError(MasterNotFoundError):
    """No sentinel answered: an outage (or a wrong address), waited out like one."""


class UnknownMasterError(MasterNotFoundError):
    """The sentinels answered, and none monitors a master of that name: a setting to fix."""


class SentinelRefusedError(MasterNotFoundError):
    """The sentinels refused the sentinel credentials: a setting to fix."""


@attrs.define
class MasterSearch:
    """One search for the primary of `target`: what each sentinel answered."""

    target: RedisTarget
    unreachable: list[str] = attrs.field(factory=list)
    refused: list[str] = attrs.field(factory=list)
    known: set[str] = attrs.field(factory=set)

    @property
    def master(self) -> str:
        """The master's name, as the setting says."""
        assert self.target.sentinels is not None
        return self.target.sentinels.master

    def failed(self, where: str, error: redis.RedisError) -> None:
        """Note a sentinel that didn't answer; errors other than these are raised."""
        if isinstance(error, redis.AuthenticationError | redis.ResponseError):
            self.refused.append(f"{where} ({error})")
        elif isinstance(error, redis.ConnectionError | redis.TimeoutError):
            self.unreachable.append(f"{where} ({error})")
        else:
            raise error

    def answered(self, masters: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        """A sentinel's masters: the state of ours if it sees it up (None if it doesn't)."""
        self.known.update(masters)
        state = masters.get(self.master)
        if state and state["is_master"] and not (state["is_sdown"] or state["is_odown"]):
            return state
        return None

    def not_found(self) -> MasterNotFoundError:
        """Why no sentinel named the primary."""
        where, master = self.target.described(), self.master
        if self.refused and not self.known:
            return SentinelRefusedError(
                f"{where}: the sentinels refused the sentinel credentials "
                f"(sentinel_username / sentinel_password): {'; '.join(self.refused)}"
            )
        if self.unreachable and not self.known:
            return SentinelsUnreachableError(
                f"{where}: no sentinel answers: {'; '.join(self.unreachable)}"
            )
        if master not in self.known:
            names = ", ".join(repr(name) for name in sorted(self.known)) or "none"
            return UnknownMasterError(
                f"{where}: the sentinels monitor no master named {master!r} (they know {names})"
            )
        return MasterNotFoundError(
            f"{where}: the sentinels see master {master!r} down (a failover may be under way)"
        )


class SentinelSet(Sentinel):
    """redis-py's Sentinel, whose failure to find the primary says why, naming the setting."""

    def __init__(self, target: RedisTarget, options: dict[str, Any]) -> None:
        """`options`: the connection options (timeouts, TLS) to use with the sentinels."""
        sentinels = target.sentinels
        assert sentinels is not None
        options = {
            **options,
            "ssl": target.tls is not None,
            "username": sentinels.username,
            "password": sentinels.password,
        }
        super().__init__(sentinels.addresses, sentinel_kwargs=options)
        self.target = target

    def discover_master(self, service_name: str) -> Address:
        """The primary's address, from the first sentinel that sees it up."""
        search = MasterSearch(self.target)
        for index, sentinel in enumerate(self.sentinels):
            try:
                masters: dict[str, dict[str, Any]] = sentinel.sentinel_masters()  # type: ignore[assignment]
            except redis.RedisError as error:
                search.failed(_address_of(sentinel), error)
                continue
            state = search.answered(masters)
            if state is not None:
                # The sentinel that answered is asked first next time.
                self.sentinels[0], self.sentinels[index] = sentinel, self.sentinels[0]
                return state["ip"], int(state["port"])
        raise search.not_found()

    def close(self) -> None:
        """Close the connections to the sentinels (they reconnect if asked again)."""
        for sentinel in self.sentinels:
            sentinel.close()


class ThreadedSentinels:
    """A `SentinelSet` asked from asyncio code: each search on a worker thread.

    The primary is looked for only as a connection is made, so one search
    code serves both clients, and the event loop carries on meanwhile.
    """

    def __init__(self, sentinels: SentinelSet) -> None:
        self.sentinels = sentinels

    async def discover_master(self, service_name: str) -> Address:
        """`SentinelSet.discover_master`, awaited."""
        return await asyncio.to_thread(self.sentinels.discover_master, service_name)

    async def aclose(self) -> None:
        """Close the connections to the sentinels."""
        self.sentinels.close()


def _address_of(sentinel: redis.Redis) -> str:
    options = sentinel.connection_pool.connection_kwargs
    return f"{options.get('host')}:{options.get('port')}"


#: Whether this redis-py's connections reconnect by themselves through `connect_check_health`
#: (redis-py 6 and later), which skips the asking of `SentinelManagedConnection.connect`;
#: redis-py 5's reconnect through `connect`, so they ask the sentinels every time already.
RECONNECTS_WITHOUT_ASKING = hasattr(SentinelManagedConnection, "connect_check_health")


class PrimaryConnection(SentinelManagedConnection):
    """A connection to the primary behind Sentinel that asks for it at every (re)connect.

    redis-py's (6 and later) asks only when its pool hands it out; one that
    reconnects by itself (a single-connection client's, a
    `per_thread.thread_clients` thread's) went back to the old address forever after a failover.
    (redis.asyncio's asks at every connect already, as redis-py 5's does.)
    """

    def _connect_retry(self) -> None:
        if not RECONNECTS_WITHOUT_ASKING:
            super()._connect_retry()  # type: ignore[no-untyped-call]
            return
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


class SentinelPool(redis.sentinel.SentinelConnectionPool):
    """redis-py's pool of primary connections behind Sentinel, whose closing (the client's
    does it) closes the connections to the sentinels too: redis-py's leaves them open, for
    the garbage collector to find (a ResourceWarning at the interpreter's exit)."""

    sentinel_manager: SentinelSet

    def disconnect(self, inuse_connections: bool = True) -> None:
        try:
            super().disconnect(inuse_connections)
        finally:
            # Not when only the idle connections go, as when the sentinels name a new
            # primary: they were just asked, and will be again.
            if inuse_connections:
                self.sentinel_manager.close()


class BlockingSentinelPool(
    redis.asyncio.sentinel.SentinelConnectionPool, redis.asyncio.BlockingConnectionPool
):
    """redis.asyncio's pool of primary connections behind Sentinel, where a task finding
    every connection busy waits for one (as in `connection.connect_async`)."""

    async def disconnect(self, inuse_connections: bool = True) -> None:
        """Close the connections, and as the client closes, those to the sentinels (redis-py
        5.0's client calls this, later ones `aclose`, which calls this)."""
        try:
            await super().disconnect(inuse_connections)
        finally:
            if inuse_connections:  # (as in `SentinelPool.disconnect`)
                await self.sentinel_manager.aclose()
