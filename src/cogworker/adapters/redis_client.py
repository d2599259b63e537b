"""The one type of a Redis client cogworker's stores take: one server or a cluster, and the
same for redis.asyncio (`AsyncRedisClient`).

`redis.RedisCluster` is not a `redis.Redis`; the two share the commands the
stores send (single-key commands, scripts by SHA, non-transactional
pipelines, `scan_iter`, which a cluster client runs on every primary).
Code that must tell them apart asks `is_cluster`.  `queue_mget` queues MGET by
name (redis-py's cluster pipeline refused the method whatever the keys' slots).
The asyncio twins (`redis.asyncio.RedisCluster`) share all of this.

The connection factory builds every cluster client as a `ClusterClient`
(`cluster_client`; `async_cluster.AsyncCluster` for asyncio): a
`redis.RedisCluster` that raises the errors redis-py's cluster client gives
for an outage (`is_cluster_outage`) as `redis.ConnectionError`:
`SlotNotCoveredError` (a slot without a primary), `RedisClusterUnreachableError`
(no node answers), and a bare `RedisClusterException` from the topology
refresh a command runs after `CLUSTERDOWN` ("All slots are not covered": a
shard lost and its slots not yet given to another primary; "could not agree":
nodes with different maps mid-change).  None is a `redis.RedisError`, the
one kind the worker handles as Redis being away: one escaping a
settlement's `except redis.RedisError` would leave its job in progress
under a live process, which nothing recovers until that process stops,
and a loop's catch-all logs it as an internal error.  Like a
connection error, they leave unknown whether the command ran, and like one
they are never re-sent here: a cluster's pipeline doesn't send a command
again whose node failed (`cluster_rounds`), which redis-py's does.  redis-py's subclasses of
`RedisClusterException` that name a misuse (a transaction across slots, a
pipeline misused) pass as they are: no back-off makes them work.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeGuard

import redis
import redis.asyncio
from redis.exceptions import RedisClusterException

from cogworker.adapters.command_values import AsyncCommands, Commands

RedisClient = redis.Redis | redis.RedisCluster
#: A non-transactional pipeline of either: redis-py's on one server; on a cluster,
#: commands as values its executor sends (`command_values`, `cluster_client`).
RedisPipeline = redis.client.Pipeline | Commands
AsyncRedisClient = redis.asyncio.Redis | redis.asyncio.RedisCluster
AsyncRedisPipeline = redis.asyncio.client.Pipeline | AsyncCommands

#: Longer than any blocking command cogworker issues (see connection.BLOCK_SECONDS).
SOCKET_TIMEOUT = 5.0

#: What redis-py's cluster client raises when it can't reach a slot's primary (the names
#: this redis-py has: `RedisClusterUnreachableError` is redis-py 8.2's; cogworker imports,
#: and runs on one server, with redis-py 5.0 and later, as Celery's and arq's pins need).
#: A bare `RedisClusterException` is an outage too (see `is_cluster_outage`).
CLUSTER_OUTAGES: tuple[type[Exception], ...] = tuple(
    getattr(redis.exceptions, name)
    for name in ("SlotNotCoveredError", "RedisClusterUnreachableError")
    if hasattr(redis.exceptions, name)
)


def is_cluster_outage(error: Exception) -> bool:
    """Whether `error`, a `redis.RedisClusterException`, says the cluster can't serve now
    (see the module's docstring): one of `CLUSTER_OUTAGES`, or the bare class, which
    redis-py's topology refresh raises; not a subclass naming a misuse."""
    return isinstance(error, CLUSTER_OUTAGES) or type(error) is RedisClusterException


#: The oldest redis-py whose cluster clients cogworker's are built on and tested with.
CLUSTER_REDIS_PY = (8, 2)


def redis_py_version() -> tuple[int, ...]:
    """The installed redis-py's version, as numbers (`(8, 2, 0)`)."""
    numbers = []
    for part in redis.__version__.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


@contextmanager
def outage_as_connection_error() -> Iterator[None]:
    """Raise a cluster outage (`is_cluster_outage`) met inside as `redis.ConnectionError`."""
    try:
        yield
    # From redis.exceptions: redis-py 5.0 has no `redis.RedisClusterException`, and naming
    # it here turned any error met inside (a refused command) into AttributeError.
    except RedisClusterException as error:
        if not is_cluster_outage(error):
            raise
        raise redis.ConnectionError(f"{type(error).__name__}: {error}") from error


#: What leaves unknown whether a command sent ran.
UNKNOWN_OUTCOME = (redis.ConnectionError, redis.TimeoutError)


def unless_outcome_unknown(replies: list[Any]) -> list[Any]:
    """A cluster pipeline's `replies`, unless one is a connection error or a timeout: then
    that is raised, as a single server's pipeline raises it (the replies of that node's
    commands are lost, and they may have run)."""
    lost = next((reply for reply in replies if isinstance(reply, UNKNOWN_OUTCOME)), None)
    if lost is not None:
        raise lost
    return replies


def is_cluster(client: RedisClient) -> TypeGuard[redis.RedisCluster]:
    """Whether `client` talks to a Redis Cluster."""
    return isinstance(client, redis.RedisCluster)


def queue_mget(pipe: Any, names: Sequence[str]) -> None:
    """Queue `MGET names` (keys of one slot) on a pipeline of either client."""
    pipe.execute_command("MGET", *names)
