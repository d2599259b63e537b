"""Durable writes on one server or a cluster: a pipeline's writes, then WAIT on their connection.

WAIT answers how many replicas have every write *its connection* made so
far; sent on another connection it answers at once, whatever became of the
writes.  On one server the pipeline's one connection carries the writes and
the WAIT ending them (`Replication.queue_wait`).  A cluster pipeline sends
each node its part on one of the node's connections, but re-sends a
redirected command on another, which a WAIT queued on the pipeline would not
cover.  So on a cluster, with replicas asked for, the commands queued on the
pipeline are sent here instead: grouped by the primary owning their slot,
each group through that node's own `redis.Redis` as one pipeline ending with
a WAIT.  A reply of MOVED, ASK or TRYAGAIN means the command did not run: it
is sent in the next round where the reply says (ASKING first for ASK; after
a short pause for TRYAGAIN), with a WAIT of its own there, for at most
`ROUNDS` rounds.  NOSCRIPT likewise, once the script is loaded on every
primary.  Another error is raised once every node had its part, as
`scripts.run_pipeline` raises it; a connection error or a timeout is raised
at once and never re-sent (the write may have run).  The fewest replicas any
of the WAITs reached is what the writes reached.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import redis
from redis.cluster import ClusterNode
from redis.exceptions import AskError, MovedError, NoScriptError, TryAgainError

from cogworker.adapters import scripts
from cogworker.adapters.redis_client import RedisClient, RedisPipeline, is_cluster
from cogworker.adapters.replication import NotReplicatedError, Replication, Shortfall

#: Rounds of sending before a command still redirected is raised (redis-py's cluster
#: client follows a command's redirects 16 times).
ROUNDS = 16
#: How long a command answered TRYAGAIN (its keys mid-migration) waits to be sent again.
TRY_AGAIN_PAUSE = 0.05

#: A queued command: its arguments and its options (what parses its reply).
Command = tuple[Sequence[Any], Mapping[str, Any]]


def run(
    client: RedisClient, pipe: RedisPipeline, replication: Replication
) -> tuple[list[Any], Shortfall | None]:
    """Execute `pipe` (see `scripts.run_pipeline`), its writes waiting for `replication`'s
    replicas on their own connections: the writes' replies, and the shortfall, if any."""
    if not replication.replicas:
        return scripts.run_pipeline(client, pipe), None
    if not is_cluster(client):
        replication.queue_wait(pipe)
        return replication.split(scripts.run_pipeline(client, pipe))
    commands = scripts.queued(pipe)
    pipe.reset()
    if not commands:
        return [], None
    written = run_on_primaries(client, commands, replication)
    return written.replies, replication.shortfall(min(written.reached.values()))


def confirmed(client: RedisClient, pipe: RedisPipeline, replication: Replication) -> list[Any]:
    """`run`'s replies; NotReplicatedError if the writes reached too few replicas."""
    replies, short = run(client, pipe, replication)
    if short is not None:
        raise NotReplicatedError(short)
    return replies


@attrs.frozen(kw_only=True)
class Written:
    """What a cluster pipeline's commands answered, in the order queued, and the fewest
    replicas each primary's WAITs reached, by node name."""

    replies: list[Any]
    reached: dict[str, int]


@attrs.frozen
class Route:
    """Where a command goes next: `node`, after ASKING when `asking`."""

    node: ClusterNode
    asking: bool = False


def run_on_primaries(
    client: redis.RedisCluster, commands: Sequence[Command], replication: Replication
) -> Written:
    """Send `commands`, each primary's with a WAIT for `replication` on one connection."""
    replies: list[Any] = [None] * len(commands)
    reached: dict[str, int] = {}
    routes = {index: _first_route(client, args) for index, (args, _options) in enumerate(commands)}
    for _round in range(ROUNDS):
        if not routes:
            break
        routes = _send_round(client, commands, routes, replication, replies, reached)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply  # refused (or still redirected after ROUNDS): said as a pipeline says it
    return Written(replies=replies, reached=reached)


def _first_route(client: redis.RedisCluster, args: Sequence[Any]) -> Route:
    """The primary owning the slot of the keys `args` name, as the slot table has it."""
    slot = client.determine_slot(*args)
    if slot is None:  # (CLIENT TRACKING only, never in a pipeline that moves jobs)
        raise ValueError(f"{args[0]!r} names no key to send it by")
    return Route(client.nodes_manager.get_node_from_slot(slot))


def _send_round(
    client: redis.RedisCluster,
    commands: Sequence[Command],
    routes: Mapping[int, Route],
    replication: Replication,
    replies: list[Any],
    reached: dict[str, int],
) -> dict[int, Route]:
    """Send each node its commands of this round, then a WAIT; note the replies and what
    each WAIT reached; the routes of the commands to send again."""
    again: dict[int, Route] = {}
    for node, indexes in _by_node(routes).items():
        answers, wait = _send_to_node(
            client, [(commands[i], routes[i]) for i in indexes], replication
        )
        ran = False
        for index, answer in zip(indexes, answers, strict=True):
            replies[index] = answer
            route = _next_route(client, routes[index].node, commands[index], answer)
            if route is None:
                ran = True
            else:
                again[index] = route
        if ran:  # a WAIT after writes that all bounced says nothing about them
            reached[node] = min(wait, reached.get(node, wait))
    if any(isinstance(replies[index], TryAgainError) for index in again):
        time.sleep(TRY_AGAIN_PAUSE)
    return again


def _by_node(routes: Mapping[int, Route]) -> dict[str, list[int]]:
    """The commands' indexes by the name of the node they go to, in the order queued."""
    grouped: dict[str, list[int]] = {}
    for index in sorted(routes):
        grouped.setdefault(routes[index].node.name, []).append(index)
    return grouped


def _send_to_node(
    client: redis.RedisCluster, sends: Sequence[tuple[Command, Route]], replication: Replication
) -> tuple[list[Any], int]:
    """Send `sends` to their one node in one pipeline ending with the WAIT: their replies,
    and the replicas the WAIT reached."""
    pipe = client.get_redis_connection(sends[0][1].node).pipeline(transaction=False)
    for (args, options), route in sends:
        if route.asking:
            pipe.execute_command("ASKING")  # type: ignore[no-untyped-call]  # redis-py's
        pipe.execute_command(*args, **options)  # type: ignore[no-untyped-call]  # likewise
    replication.queue_wait(pipe)
    answers = pipe.execute(raise_on_error=False)
    wait = answers.pop()
    if isinstance(wait, redis.RedisError):
        raise wait  # refused (an ACL without +wait): said as any refusal is
    it = iter(answers)
    return [_after_asking(it, route) for _command, route in sends], int(wait)


def _after_asking(answers: Any, route: Route) -> Any:
    """The next command's reply from `answers`, past its ASKING's, if it had one."""
    if route.asking:
        next(answers)
    return next(answers)


def _next_route(
    client: redis.RedisCluster, node: ClusterNode, command: Command, answer: Any
) -> Route | None:
    """Where a command that did not run goes next (None: it ran, or failed for good)."""
    if isinstance(answer, MovedError | AskError) and not answer.host:
        answer.host = node.host  # a node of unknown endpoint redirects with a port only
    if isinstance(answer, MovedError):
        client.nodes_manager.move_slot(answer)
        return Route(client.nodes_manager.get_node_from_slot(answer.slot_id))
    if isinstance(answer, AskError):
        host, port = client.nodes_manager.remap_host_port(answer.host, answer.port)
        target = client.get_node(host, port)  # type: ignore[no-untyped-call]  # redis-py's
        return None if target is None else Route(target, asking=True)
    if isinstance(answer, TryAgainError):
        return Route(node)
    if isinstance(answer, NoScriptError):
        args, _options = command  # ("EVALSHA", sha, numkeys, *keys_and_args)
        sha = args[1].decode() if isinstance(args[1], bytes) else args[1]
        client.script_load(scripts.SCRIPTS_BY_SHA[sha].source)
        return Route(node)
    return None
