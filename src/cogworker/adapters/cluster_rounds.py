"""A durable write's rounds on a cluster, without I/O: what `durable_writes` (redis-py's
cluster client) and `async_durable_writes` (redis.asyncio's) both do, decided once.

The commands queued on a cluster pipeline are sent by primary, each node's
part through one connection of its own followed by a WAIT (which counts only
the writes of its connection), in rounds: a command answered MOVED, ASK,
TRYAGAIN or NOSCRIPT did not run, and is sent in the next round where the
reply says (ASKING first for ASK; after `TRY_AGAIN_PAUSE` for TRYAGAIN; once
its script is loaded for NOSCRIPT), for at most `ROUNDS` rounds.  Another
error is raised once every node had its part; a connection error or a
timeout is raised at once, and nothing is sent again (the write may have
run).  The fewest replicas any WAIT after a write that ran reached is what
the writes reached.

`rounds` is a generator: it yields each `Step` it needs done (find a
command's primary, send a node its part, follow a redirect, load a script,
pause) and is sent back its outcome; each module runs it with its client's
calls (`driven`, `driven_async`).  The steps' nodes are either client's
`ClusterNode`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import Any, Generic, TypeVar

import attrs
import redis
from redis.exceptions import AskError, MovedError, NoScriptError, TryAgainError

from cogworker.adapters import scripts
from cogworker.adapters.redis_client import unless_outcome_unknown
from cogworker.adapters.replication import Replication, Shortfall

#: Rounds of sending before a command still redirected is raised (redis-py's cluster
#: client follows a command's redirects 16 times).
ROUNDS = 16
#: How long a command answered TRYAGAIN (its keys mid-migration) waits to be sent again.
TRY_AGAIN_PAUSE = 0.05

#: A queued command: its arguments and its options (what parses its reply).
Command = tuple[Sequence[Any], Mapping[str, Any]]


@attrs.frozen(kw_only=True)
class Written:
    """What a cluster pipeline's commands answered, in the order queued, and the fewest
    replicas each primary's WAITs reached, by node name."""

    replies: list[Any]
    reached: dict[str, int]

    def outcome(self, replication: Replication) -> tuple[list[Any], Shortfall | None]:
        """The replies, and the shortfall of the fewest replicas a primary reached."""
        return self.replies, replication.shortfall(min(self.reached.values()))


@attrs.frozen
class Route:
    """Where a command goes next: `node`, after ASKING when `asking`."""

    node: Any
    asking: bool = False


@attrs.frozen
class Locate:
    """Find the primary owning the slot of the keys `args` name: its node."""

    args: Sequence[Any]


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


T = TypeVar("T")
Step = Locate | Send | Moved | Asked | Reload | Pause
#: `rounds`, or a part of it: yields steps, is sent their outcomes, ends with a `T`.
Steps = Generator[Step, Any, T]


def rounds(commands: Sequence[Command], replication: Replication) -> Steps[Written]:
    """Send `commands`, each primary's with a WAIT for `replication` on one connection:
    ends with what they answered (`Written`)."""
    replies: list[Any] = [None] * len(commands)
    reached: dict[str, int] = {}
    routes: dict[int, Route] = {}
    for index, (args, _options) in enumerate(commands):
        routes[index] = Route((yield Locate(args)))
    for _round in range(ROUNDS):
        if not routes:
            break
        routes = yield from _round_of(commands, routes, replication, replies, reached)
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply  # refused (or still redirected after ROUNDS): said as a pipeline says it
    return Written(replies=replies, reached=reached)


def driven(steps: Steps[T], perform: Callable[[Step], Any]) -> T:
    """Run `steps` to their end, `perform` doing each: what they end with."""
    outcome = None
    while not isinstance(step := _next(steps, outcome), _Done):
        outcome = perform(step)
    return step.value


async def driven_async(steps: Steps[T], perform: Callable[[Step], Awaitable[Any]]) -> T:
    """`driven`, each step awaited."""
    outcome = None
    while not isinstance(step := _next(steps, outcome), _Done):
        outcome = await perform(step)
    return step.value


@attrs.frozen
class _Done(Generic[T]):
    """What `steps` ended with."""

    value: T


def _next(steps: Steps[T], outcome: Any) -> Step | _Done[T]:
    """`steps`' next step, sent the last one's `outcome`; `_Done` with their end."""
    try:
        return steps.send(outcome)
    except StopIteration as stop:
        return _Done(stop.value)


def _round_of(
    commands: Sequence[Command],
    routes: Mapping[int, Route],
    replication: Replication,
    replies: list[Any],
    reached: dict[str, int],
) -> Steps[dict[int, Route]]:
    """Send each node its commands of this round, then a WAIT; note the replies and what
    each WAIT reached: ends with the routes of the commands to send again."""
    again: dict[int, Route] = {}
    for name, indexes in _by_node(routes).items():
        sends = [(commands[i], routes[i]) for i in indexes]
        node = routes[indexes[0]].node
        answers, wait = _node_answers(sends, (yield Send(node, _node_part(sends, replication))))
        ran = False
        for index, answer in zip(indexes, answers, strict=True):
            replies[index] = answer
            route = yield from _next_route(node, commands[index], answer)
            if route is None:
                ran = True
            else:
                again[index] = route
        if ran:  # a WAIT after writes that all bounced says nothing about them
            reached[name] = min(wait, reached.get(name, wait))
    if any(isinstance(replies[index], TryAgainError) for index in again):
        yield Pause(TRY_AGAIN_PAUSE)
    return again


def _by_node(routes: Mapping[int, Route]) -> dict[str, list[int]]:
    """The commands' indexes by the name of the node they go to, in the order queued."""
    grouped: dict[str, list[int]] = {}
    for index in sorted(routes):
        grouped.setdefault(routes[index].node.name, []).append(index)
    return grouped


def _node_part(sends: Sequence[tuple[Command, Route]], replication: Replication) -> list[Command]:
    """What a node is sent for `sends`: each command (after ASKING if asked), then the WAIT."""
    part: list[Command] = []
    for command, route in sends:
        if route.asking:
            part.append((("ASKING",), {}))
        part.append(command)
    return [*part, (replication.wait_args(), {})]


def _node_answers(
    sends: Sequence[tuple[Command, Route]], answers: list[Any]
) -> tuple[list[Any], int]:
    """The replies of `sends` from their node's `answers` (ASKING's left out), and the
    replicas the WAIT reached; a connection error or a timeout raised."""
    *answers, wait = unless_outcome_unknown(answers)
    if isinstance(wait, redis.RedisError):
        raise wait  # refused (an ACL without +wait): said as any refusal is
    it = iter(answers)
    return [_after_asking(it, route) for _command, route in sends], int(wait)


def _after_asking(answers: Any, route: Route) -> Any:
    """The next command's reply from `answers`, past its ASKING's, if it had one."""
    if route.asking:
        next(answers)
    return next(answers)


def _next_route(node: Any, command: Command, answer: Any) -> Steps[Route | None]:
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
        args, _options = command  # ("EVALSHA", sha, numkeys, *keys_and_args)
        sha = args[1].decode() if isinstance(args[1], bytes) else args[1]
        yield Reload(scripts.SCRIPTS_BY_SHA[sha])
        return Route(node)
    return None


def asked_node(client: Any, error: AskError) -> Any:
    """The node of `client` (either cluster client) an ASK `error` names, None if unknown."""
    host, port = client.nodes_manager.remap_host_port(error.host, error.port)
    return client.get_node(host, port)
