"""The one type of a Redis client cogworker's stores take: one server or a cluster, and the
same for redis.asyncio (`AsyncRedisClient`).

`redis.RedisCluster` is not a `redis.Redis`; the two share the commands the
stores send (single-key commands, scripts by SHA, non-transactional
pipelines, `scan_iter`, which a cluster client runs on every primary).
Code that must tell them apart asks `is_cluster`.  A cluster's pipeline refuses
some methods whatever the keys' slots (`mget` among them): `queue_mget` queues
the command by name, which it routes by its keys like any other.  The asyncio
twins (`redis.asyncio.RedisCluster`, its `ClusterPipeline`) share all of this.

The connection factory builds every cluster client as a `ClusterClient`: a
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
again whose node failed, which redis-py's does.  redis-py's subclasses of
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
import redis.asyncio.cluster
from redis.cluster import ClusterNode, ClusterPipeline

RedisClient = redis.Redis | redis.RedisCluster
#: A non-transactional pipeline of either (a cluster's sends each node its part).
RedisPipeline = redis.client.Pipeline | redis.cluster.ClusterPipeline
AsyncRedisClient = redis.asyncio.Redis | redis.asyncio.RedisCluster
AsyncRedisPipeline = redis.asyncio.client.Pipeline | redis.asyncio.cluster.ClusterPipeline

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
    return isinstance(error, CLUSTER_OUTAGES) or type(error) is redis.RedisClusterException


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
    except redis.RedisClusterException as error:
        if not is_cluster_outage(error):
            raise
        raise redis.ConnectionError(f"{type(error).__name__}: {error}") from error


class ClusterClient(redis.RedisCluster):
    """A `redis.RedisCluster` whose outages are connection errors (see the module's
    docstring): when made, for every command (scripts too), every pipeline's execution and
    every look-up of a key's node."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with outage_as_connection_error():  # it connects when made
            super().__init__(*args, **kwargs)

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """Send one command (to the nodes its keys or `target_nodes` name)."""
        with outage_as_connection_error():
            return super().execute_command(*args, **kwargs)  # type: ignore[no-untyped-call]

    def get_node_from_key(self, key: Any, replica: bool = False) -> ClusterNode | None:
        """The node holding `key`'s slot (its primary, or a replica if `replica`)."""
        with outage_as_connection_error():
            node: ClusterNode | None = super().get_node_from_key(key, replica)  # type: ignore[no-untyped-call]
            return node

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        """A pipeline of this cluster: see `ClusterClientPipeline`."""
        pipe = super().pipeline(transaction, shard_hint)  # type: ignore[no-untyped-call]
        # The same object with methods of a subclass: redis-py's own construction of the
        # pipeline (its many arguments) stays redis-py's.
        pipe.__class__ = ClusterClientPipeline
        assert isinstance(pipe, ClusterClientPipeline)
        pipe.refuse_sending_again()
        return pipe


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


class ClusterClientPipeline(ClusterPipeline):
    """`ClusterClient.pipeline`'s pipelines: an outage raised as a connection error, and a
    command whose node failed never sent again (redis-py would)."""

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Send the queued commands, each node its part in one round trip.

        A connection error or a timeout met by any node is raised, whatever
        `raise_on_error` says, as a single server's pipeline raises it: the
        replies of that node's commands are lost, and they may have run.
        """
        with outage_as_connection_error():
            return unless_outcome_unknown(super().execute(raise_on_error))

    def refuse_sending_again(self) -> None:
        """Keep redis-py from sending a command again whose node failed.

        When a node's replies are lost (a connection error, a timeout), redis-py
        marks every command sent to it failed, even those already answered, and
        sends each again on its own, as it rightly does after a MOVED or ASK
        reply (a redirected command did not run).  These may have run: sent
        again, a job move would apply twice.  So such a command's answer stays
        the error it met.
        """
        send = self.parent_execute_command

        def send_unless_it_may_have_run(*args: Any, **kwargs: Any) -> Any:
            met = self._unknown_outcome_of(args)
            if met is not None:
                raise met
            return send(*args, **kwargs)  # type: ignore[no-untyped-call]

        self.parent_execute_command = send_unless_it_may_have_run

    def _unknown_outcome_of(self, args: tuple[Any, ...]) -> Exception | None:
        """The connection error or timeout a queued command `args` met, if it met one."""
        for command in self._execution_strategy.command_queue:
            if command.args == args and isinstance(command.result, UNKNOWN_OUTCOME):
                met: Exception = command.result
                return met
        return None


def is_cluster(client: RedisClient) -> TypeGuard[redis.RedisCluster]:
    """Whether `client` talks to a Redis Cluster."""
    return isinstance(client, redis.RedisCluster)


def queue_mget(pipe: Any, names: Sequence[str]) -> None:
    """Queue `MGET names` (keys of one slot) on a pipeline of either client."""
    pipe.execute_command("MGET", *names)
