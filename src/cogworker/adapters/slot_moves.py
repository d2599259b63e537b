"""Commands a Redis Cluster refused while their hash slot moved, sent again until it has.

While a slot migrates between primaries (`redis-cli --cluster reshard`), a
node answers a command on a key it no longer holds with ASK, and a script or
multi-key command whose keys are not all on one side with TRYAGAIN.  Every
cogworker script names a key that may not exist (a lock's placeholder, a
counter not yet counted), so a slot's scripts are refused with TRYAGAIN for as
long as its move takes.  redis-py follows ASK and sends a refused command
again, 16 times in all over about half a second, then gives up with
`ClusterError("TTL exhausted.")`; a slot holding a busy queue's keys takes
longer than that to move.

Each of those answers means the command did not run, so sending it again
can't apply it twice: `while_slot_moves` does (around each script call, see
`scripts`), for as long as cogworker lets one command take (`SOCKET_TIMEOUT`),
then lets the error through; a cluster pipeline's rounds do it for its
commands (`cluster_rounds`).  The `_async` twin does the same for asyncio
clients (redis.asyncio gives up the same way).  A timeout or a lost connection is never sent
again (see `connection`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import ClusterError

from cogworker.adapters.redis_client import SOCKET_TIMEOUT

T = TypeVar("T")

#: How long a command refused by its slot's move is sent again (seconds).
PATIENCE = SOCKET_TIMEOUT
#: The pause before each sending again: redis-py's own attempts already took a while.
PAUSE = 0.05
#: What redis-py says when every one of its attempts was redirected or refused.
GAVE_UP = "TTL exhausted."


def refused_while_moving(reply: object) -> bool:
    """Whether `reply` is redis-py giving up on a command that every node it reached
    redirected or refused with TRYAGAIN: the command never ran."""
    return type(reply) is ClusterError and str(reply) == GAVE_UP


def patience_from_now(clock: Callable[[], float] = time.monotonic) -> float:
    """The `clock` time until which a command refused now is sent again."""
    return clock() + PATIENCE


def while_slot_moves(
    send: Callable[[], T],
    *,
    until: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """`send()`'s reply, sending it again while its slot's move refuses it, until the
    `clock` reads `until` (`PATIENCE` from now if not given: a caller sending several
    commands gives them one); then (or for any other error) the error is raised."""
    deadline = patience_from_now(clock) if until is None else until
    while True:
        try:
            return send()
        except ClusterError as error:
            _raise_unless_refused_in_time(error, deadline, clock)
        sleep(PAUSE)


async def while_slot_moves_async(
    send: Callable[[], Awaitable[T]],
    *,
    until: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """`while_slot_moves` for an asyncio client: `send()` awaited, and awaited again while
    its slot's move refuses it, until `until`; the pause between is the loop's."""
    deadline = patience_from_now(clock) if until is None else until
    while True:
        try:
            return await send()
        except ClusterError as error:
            _raise_unless_refused_in_time(error, deadline, clock)
        await asyncio.sleep(PAUSE)


def _raise_unless_refused_in_time(
    error: ClusterError, deadline: float, clock: Callable[[], float]
) -> None:
    """Return if `error` is a slot move's refusal met before `deadline` (send it again);
    else raise it."""
    if not refused_while_moving(error) or clock() >= deadline:
        raise error
