"""What Redis won't take: answers that no retry changes, said so a person can act.

An outage (refused connection, timeout, loading, no sentinel answering)
passes: callers back off and try again.  A refusal is a no: Redis refusing
the credentials, a command the ACL user may not run, a database index it
doesn't have, or a write while it is out of memory; a TLS certificate that
doesn't verify; sentinels that monitor no master of that name or refuse
their credentials; another server than Redis at the port (its answer isn't
Redis's protocol, so no Redis will ever answer there).  All but memory and a
read-only replica stay no until someone changes a setting, so a worker stops
at start-up instead of retrying them forever.
"""

from __future__ import annotations

import re
import ssl

import redis
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    InvalidResponse,
    NoPermissionError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    ResponseError,
)

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.connection import connect
from cogworker.adapters.redis_target import RedisTarget
from cogworker.adapters.scripts import LuaScript
from cogworker.adapters.sentinel import SentinelRefusedError, UnknownMasterError

PROBE = LuaScript("probe")
#: "User u has no permissions to run the 'evalsha' command" (or 'client|setinfo').
_FORBIDDEN_COMMAND = re.compile(r"run the '([^']+)' command")
#: redis-py's InvalidResponse: 'Protocol error, got "H" as reply type byte'.
_FIRST_BYTE = re.compile(r'got "(.)" as reply type byte')


def refusal(error: redis.RedisError) -> str | None:
    """What was refused, in a sentence ("Redis refused the credentials (...)"), when
    `error` is a no rather than an outage; else None."""
    if isinstance(error, UnknownMasterError | SentinelRefusedError):
        return str(error).partition(": ")[2]  # without the setting: the caller names it
    stranger = not_redis(error)
    if stranger is not None:
        return stranger
    untrusted = _unverified_certificate(error)
    if untrusted is not None:
        return (
            f"Redis's TLS certificate doesn't verify: {untrusted} ({error}); check the CA "
            "(tls_ca_file) and the host name"
        )
    if isinstance(error, AuthenticationError | AuthorizationError):
        return (
            f"Redis refused the credentials ({error}): the ACL user doesn't exist, "
            "is off, or the password is wrong"
        )
    if isinstance(error, NoPermissionError):
        return f"Redis refused a command or key to this ACL user ({error}); {_rule_to_add(error)}"
    if isinstance(error, OutOfMemoryError):
        return f"Redis refused a write: it is out of memory, at its maxmemory ({error})"
    if isinstance(error, ReadOnlyError):
        return f"Redis refused a write: it is a read-only replica ({error})"
    if isinstance(error, ResponseError) and "DB index" in str(error):
        return f"Redis refused the database index ({error})"
    return None


def not_redis(error: BaseException) -> str | None:
    """What to say when the server answered in another protocol than Redis's (the URL's
    port is another server's: no Redis will ever answer there); else None."""
    if not isinstance(error, InvalidResponse):
        return None
    first = _FIRST_BYTE.search(str(error))
    if first is None:
        sent = str(error)
    else:  # an HTTP server's answer starts "HTTP/1.1 400", or at once its HTML page
        http = ", as an HTTP server does" if first.group(1) in ("H", "<") else ""
        sent = f"it sent {first.group(1)!r} first{http}"
    return (
        f"this is not a Redis server: it did not answer as Redis ({sent}); "
        "is the URL's port a Redis server's?"
    )


def lasting_refusal(error: redis.RedisError) -> str | None:
    """What was refused, when only a changed setting can make it a yes; else None.

    Out of memory and read-only pass: a drain frees memory, a failover
    makes a replica the primary.
    """
    if isinstance(error, OutOfMemoryError | ReadOnlyError):
        return None
    return refusal(error)


def _unverified_certificate(error: BaseException) -> str | None:
    """The reason a TLS certificate failed verification, if that is what `error` comes from."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return cause.verify_message or str(cause)
        cause = cause.__cause__ or cause.__context__
    return None


def _rule_to_add(error: NoPermissionError) -> str:
    forbidden = _FORBIDDEN_COMMAND.search(str(error))
    if forbidden is not None:
        return f"add +{forbidden.group(1)} to the user's rules (ACL SETUSER)"
    return f"add ~{keys.PREFIX}* to the user's key patterns (ACL SETUSER)"


def refused_access(target: RedisTarget, *, writes: bool = True) -> str | None:
    """What Redis at `target` lastingly refuses a worker (see `lasting_refusal`); None if
    nothing is refused, or it can't be reached now (the worker waits for it).

    `writes` False: only connecting is tried (the credentials, the database index),
    as much as a dashboard, which may be read-only, needs.
    """
    try:
        # A single-connection client connects (and authenticates) when made; so does a
        # cluster's client, whatever its connections.
        client = connect(target, connections="single")
    # From redis.exceptions: redis-py 5.0 has no `redis.RedisClusterException`, and naming it
    # there turned any error in making the client (a wrong password) into AttributeError.
    except (redis.RedisError, RedisClusterException) as error:
        return _unmade(target, error)
    try:
        with client:
            if writes:
                PROBE(client, (keys.no_lock(""),), ())
            else:
                client.ping()
    except redis.RedisError as error:
        return lasting_refusal(error)
    return None


def _unmade(target: RedisTarget, error: redis.RedisError | RedisClusterException) -> str | None:
    """What `refused_access` says when `error` stopped the making of a client of `target`."""
    if target.cluster:
        # A worker can't wait for a cluster no node of which answers yet, as it does for
        # one server: its own client could not be made (redis-py's cluster client connects
        # when made, a refused user included).
        return f"no node of the Redis Cluster answers, or none lets this user in ({error})"
    assert isinstance(error, redis.RedisError)  # only a cluster's client raises the other
    return lasting_refusal(error)
