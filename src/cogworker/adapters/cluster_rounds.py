"""A cluster pipeline's rounds, without I/O: what the executors of both cluster clients
(`cluster_client`, redis-py's; `async_cluster`, redis.asyncio's) do, decided once.

The commands queued on a cluster pipeline are sent by primary, each node's
part as one pipeline on one connection of its own (followed by a WAIT for
durable writes: it counts only the writes of its connection), in rounds: a
command answered MOVED, ASK, TRYAGAIN or NOSCRIPT did not run, and is sent
in the next round where the reply says (ASKING first for ASK; after
`TRY_AGAIN_PAUSE` for TRYAGAIN; once its script is loaded for NOSCRIPT),
for at most `ROUNDS` rounds of redirects in a row and `slot_moves.PATIENCE`
of TRYAGAIN pauses; one still refused then is answered redis-py's "TTL
exhausted" (`slot_moves.refused_while_moving`).  Another error stays in its
command's place.  A connection error or a timeout is raised at once, and
nothing is sent again: the commands of that node may have run, and a job
move sent again would apply twice (redis-py's own cluster pipeline sends
them again).  The fewest replicas any WAIT after a write that ran reached is
what the writes reached.

`rounds` is a generator: it yields each `Step` it needs done (find a
command's primary, send a node its part, follow a redirect, load a script,
pause) and is sent back its outcome; each executor runs it with its client's
calls (`steps.driven`, `steps.driven_async`).  The steps' nodes are either client's
`ClusterNode`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import redis
from redis.exceptions import AskError, ClusterError, MovedError, NoScriptError, TryAgainError

from cogworker.adapters import scripts
from cogworker.adapters.command_values import Command, first_key
from cogworker.adapters.redis_client import unless_outcome_unknown
from cogworker.adapters.replication import Replication, Shortfall
from cogworker.adapters.slot_moves import GAVE_UP, PATIENCE
from cogworker.adapters.steps import Steps

#: Rounds of redirects before a command still redirected gives up (redis-py's cluster
#: client follows a command's redirects 16 times).
ROUNDS = 16
#: How long a command answered TRYAGAIN (its keys mid-migration) waits to be sent again.
TRY_AGAIN_PAUSE = 0.05
#: Rounds after a TRYAGAIN pause before a command still refused gives up: as long as
#: a single command is sent again while its slot moves (`slot_moves.PATIENCE`).
TRY_AGAIN_ROUNDS = round(PATIENCE / TRY_AGAIN_PAUSE)
#: Replicas not waited for: a plain pipeline's rounds.
NO_WAIT = Replication()


@attrs.frozen(kw_only=True)
class Written:
    """What a cluster pipeline's commands answered, in the order queued (errors among
    them), and the fewest replicas each primary's WAITs reached, by node name."""

    replies: list[Any]
    reached: dict[str, int]

    def outcome(self, replication: Replication) -> tuple[list[Any], Shortfall | None]:
        """The replies, and the shortfall of the fewest replicas a primary reached; the
        first error among the replies raised, as a pipeline raises it."""
        return self.checked(), replication.shortfall(min(self.reached.values()))

    def checked(self) -> list[Any]:
        """The replies, unless one is an error: then the first is raised."""
        for reply in self.replies:
            if isinstance(reply, Exception):
                raise reply
        return self.replies


@attrs.frozen
class Route:
    """Where a command goes next: `node`, after ASKING when `asking`."""

    node: Any
    asking: bool = False


@attrs.frozen
class Locate:
    """Find the primary owning `key`'s slot (None: a command naming no key): its node."""

    key: Any


@attrs.frozen
class Send:
    """Send `commands` to `node` on one connection: their replies, errors among them."""

    node: Any
    commands: list[Command]


@attrs.frozen
class Moved:
    """Note that `error`'s slot moved: the node owning it now."""

    error: MovedError


@attrs.frozen
class Asked:
    """The node an ASK `error` names (None: none known)."""

    error: AskError


@attrs.frozen
class Reload:
    """Load `script` on every primary (nothing back)."""

    script: scripts.LuaScript


@attrs.frozen
class Pause:
    """Wait `seconds` (nothing back)."""

    seconds: float


Step = Locate | Send | Moved | Asked | Reload | Pause


def rounds(commands: Sequence[Command], replication: Replication = NO_WAIT) -> Steps[Step, Written]:
    """Send `commands`, each primary's on one connection (with a WAIT for `replication`'s
    replicas, if it asks for any): ends with what they answered (`Written`)."""
    replies: list[Any] = [None] * len(commands)
    reached: dict[str, int] = {}
    routes: dict[int, Route] = {}
    for index, (args, options) in enumerate(commands):
        named = _named_node(options)
        routes[index] = Route(named if named is not None else (yield Locate(first_key(args))))
    redirects = pauses = 0
    while routes and redirects < ROUNDS and pauses < TRY_AGAIN_ROUNDS:
        routes, paused = yield from _round_of(commands, routes, replication, replies, reached)
        # A slot mid-move bounces a command between its two nodes (ASK, TRYAGAIN, MOVED):
        # its patience is the pauses'; ROUNDS bounds redirects in a row without one.
        pauses, redirects = (pauses + 1, 0) if paused else (pauses, redirects + 1)
    for index in routes:  # still redirected or refused: it never ran
        replies[index] = ClusterError(GAVE_UP)
    return Written(replies=replies, reached=reached)


def _round_of(
    commands: Sequence[Command],
    routes: Mapping[int, Route],
    replication: Replication,
    replies: list[Any],
    reached: dict[str, int],
) -> Steps[Step, tuple[dict[int, Route], bool]]:
    """Send each node its commands of this round (then a WAIT, if replicas are waited
    for); note the replies and what each WAIT reached: ends with the routes of the
    commands to send again, and whether it paused for a TRYAGAIN."""
    again: dict[int, Route] = {}
    for name, indexes in _by_node(routes).items():
        sends = [(commands[i], routes[i]) for i in indexes]
        node = routes[indexes[0]].node
        sent = yield Send(node, _node_part(sends, replication))
        answers, wait = _node_answers(sends, sent, replication)
        ran = False
        for index, answer in zip(indexes, answers, strict=True):
            replies[index] = answer
            route = yield from _next_route(node, commands[index], answer)
            if route is None:
                ran = True
            else:
                again[index] = route
        if ran and wait is not None:  # a WAIT after writes that all bounced says nothing
            reached[name] = min(wait, reached.get(name, wait))
    paused = any(isinstance(replies[index], TryAgainError) for index in again)
    if paused:
        yield Pause(TRY_AGAIN_PAUSE)
    return again, paused


def _by_node(routes: Mapping[int, Route]) -> dict[str, list[int]]:
    """The commands' indexes by the name of the node they go to, in the order queued."""
    grouped: dict[str, list[int]] = {}
    for index in sorted(routes):
        grouped.setdefault(routes[index].node.name, []).append(index)
    return grouped


def _named_node(options: Mapping[str, Any]) -> Any:
    """The node a command's `target_nodes` option names (None: it names none, and the
    command goes where its key lives)."""
    named = options.get("target_nodes")
    return named[0] if isinstance(named, list | tuple) and len(named) == 1 else named


def _node_part(sends: Sequence[tuple[Command, Route]], replication: Replication) -> list[Command]:
    """What a node is sent for `sends`: each command (after ASKING if asked; its node
    named, if it was, only here), then the WAIT if replicas are waited for."""
    part: list[Command] = []
    for (args, options), route in sends:
        if route.asking:
            part.append((("ASKING",), {}))
        part.append((args, {k: v for k, v in options.items() if k != "target_nodes"}))
    return [*part, (replication.wait_args(), {})] if replication.replicas else part


def _node_answers(
    sends: Sequence[tuple[Command, Route]], answers: list[Any], replication: Replication
) -> tuple[list[Any], int | None]:
    """The replies of `sends` from their node's `answers` (ASKING's left out), and the
    replicas the WAIT reached (None: no WAIT); a connection error or a timeout raised."""
    answers = unless_outcome_unknown(answers)
    wait = None
    if replication.replicas:
        *answers, wait = answers
        if isinstance(wait, redis.RedisError):
            raise wait  # refused (an ACL without +wait): said as any refusal is
    it = iter(answers)
    return [_after_asking(it, route) for _command, route in sends], (
        None if wait is None else int(wait)
    )


def _after_asking(answers: Any, route: Route) -> Any:
    """The next command's reply from `answers`, past its ASKING's, if it had one."""
    if route.asking:
        next(answers)
    return next(answers)


def _next_route(node: Any, command: Command, answer: Any) -> Steps[Step, Route | None]:
    """Where a command that did not run goes next: ends with its route (None: it ran, or
    failed for good)."""
    if isinstance(answer, MovedError | AskError) and not answer.host:
        answer.host = node.host  # a node of unknown endpoint redirects with a port only
    if isinstance(answer, MovedError):
        return Route((yield Moved(answer)))
    if isinstance(answer, AskError):
        target = yield Asked(answer)
        return None if target is None else Route(target, asking=True)
    if isinstance(answer, TryAgainError):
        return Route(node)
    if isinstance(answer, NoScriptError):
        yield Reload(scripts.script_of(command))
        return Route(node)
    return None


def asked_node(client: Any, error: AskError) -> Any:
    """The node of `client` (either cluster client) an ASK `error` names, None if unknown."""
    host, port = client.nodes_manager.remap_host_port(error.host, error.port)
    return client.get_node(host, port)
