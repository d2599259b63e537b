"""Redis connections with timeouts and retries chosen on purpose.

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
from redis.backoff import NoBackoff
from redis.retry import Retry

#: Longer than any blocking command cogworker issues (see BLOCK_SECONDS).
SOCKET_TIMEOUT = 5.0
CONNECT_TIMEOUT = 2.0
#: How long a blocking fetch waits before looking again (bounds shutdown latency).
BLOCK_SECONDS = 1.0


class PerThreadRedis(redis.Redis):
    """A client whose single commands go over a connection kept for the calling thread.

    A pooled client checks a connection out and back in around every command,
    probing it for stray data each time: about 20 µs here, a sixth of an
    enqueue.  A thread sends one command at a time, so it can keep one
    connection instead.  Pipelines still take theirs from the shared pool.
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
    url: str, *, max_connections: int | None = None, connections: Connections = "pooled"
) -> redis.Redis:
    """A client for `url` that never re-sends a command and never waits forever."""
    kind = PerThreadRedis if connections == "per-thread" else redis.Redis
    return kind.from_url(
        url,
        socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_keepalive=True,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
        max_connections=max_connections,
        decode_responses=False,
        single_connection_client=connections == "single",
    )


def describe(url: str) -> str:
    """`url` without its password, fit for a log line or a page."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user + ':***' if user else '***'}@{host}"
