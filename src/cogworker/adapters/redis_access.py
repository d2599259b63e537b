"""What Redis won't take: a URL redis-py can't use, and answers that no retry changes.

An outage (refused connection, timeout, loading) passes: callers back off
and try again.  A refusal is Redis answering no: to the credentials, to a
command the ACL user may not run, to a database index it doesn't have, or
to a write while it is out of memory.  The first three stay no until
someone changes a setting, so a worker stops at start-up instead of
retrying them forever.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import redis
from redis.connection import parse_url
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    NoPermissionError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.connection import connect
from cogworker.adapters.scripts import LuaScript

PROBE = LuaScript("probe")


def check_url(url: str) -> None:
    """Raise ValueError saying what is wrong with a Redis URL redis-py would refuse or misread."""
    # The scheme, the port, the query's options (redis-py leaves it unannotated).
    parse_url(url)  # type: ignore[no-untyped-call]
    parts = urlsplit(url)
    database = parts.path.strip("/")
    if parts.scheme in ("redis", "rediss") and database and not database.isdigit():
        raise ValueError(f"the database {database!r} is not a number (redis://HOST:PORT/NUMBER)")


def refusal(error: redis.RedisError) -> str | None:
    """What Redis refused, when `error` is its answer no rather than an outage; else None."""
    if isinstance(error, AuthenticationError | AuthorizationError):
        return f"the credentials ({error})"
    if isinstance(error, NoPermissionError):
        return f"a command or key to this ACL user ({error})"
    if isinstance(error, OutOfMemoryError):
        return f"a write: it is out of memory, at its maxmemory ({error})"
    if isinstance(error, ReadOnlyError):
        return f"a write: it is a read-only replica ({error})"
    if isinstance(error, ResponseError) and "DB index" in str(error):
        return f"the database index ({error})"
    return None


def lasting_refusal(error: redis.RedisError) -> str | None:
    """What Redis refused, when only a changed setting can make it say yes; else None.

    Out of memory and read-only pass: a drain frees memory, a failover
    makes a replica the primary.
    """
    if isinstance(error, OutOfMemoryError | ReadOnlyError):
        return None
    return refusal(error)


def refused_access(url: str, *, writes: bool = True) -> str | None:
    """What Redis at `url` lastingly refuses a worker (see `lasting_refusal`); None if
    nothing is refused, or it can't be reached now (the worker waits for it).

    `writes` False: only connecting is tried (the credentials, the database index),
    as much as a dashboard, which may be read-only, needs.
    """
    try:
        # A single-connection client connects (and authenticates) at once.
        with connect(url, connections="single") as client:
            if writes:
                PROBE(client, (keys.NO_LOCK,), ())
            else:
                client.ping()
    except redis.RedisError as error:
        return lasting_refusal(error)
    return None
