"""Redis connections with timeouts and retries chosen on purpose.

redis-py re-sends a command after a connection error by default.  A job
move that timed out may still have been applied, so a blind re-send could
apply it twice: cogworker's clients never retry on their own.  Every job
move is a script that checks where the job is first, and the caller's loop
decides when to try again (with back-off).
"""

from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

#: Longer than any blocking command cogworker issues (see BLOCK_SECONDS).
SOCKET_TIMEOUT = 5.0
CONNECT_TIMEOUT = 2.0
#: How long a blocking fetch waits before looking again (bounds shutdown latency).
BLOCK_SECONDS = 1.0


def connect(
    url: str, *, max_connections: int | None = None, single_connection: bool = False
) -> redis.Redis:
    """A client for `url` that never re-sends a command and never waits forever.

    `single_connection`: one connection of its own, for one busy thread (no
    pool checkout, with its check for stray data, on every command).
    """
    return redis.Redis.from_url(
        url,
        socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=CONNECT_TIMEOUT,
        socket_keepalive=True,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
        max_connections=max_connections,
        decode_responses=False,
        single_connection_client=single_connection,
    )


def describe(url: str) -> str:
    """`url` without its password, fit for a log line or a page."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user + ':***' if user else '***'}@{host}"
