"""Work decided without I/O, done by whoever holds the client: a generator of steps.

A decision that needs Redis's answers half-way (a cluster pipeline's rounds,
a pipeline's scripts Redis forgot) is written once, as a generator: it
yields each step it needs done, is sent back the step's outcome, and ends
with its result.  `driven` runs it with a sync client's calls,
`driven_async` with an asyncio client's: the two transports differ only in
how a step is done.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, TypeVar

import attrs

T = TypeVar("T")
S = TypeVar("S")
#: Yields steps (`S`), is sent their outcomes, ends with a `T`.
Steps = Generator[S, Any, T]


def driven(steps: Steps[S, T], perform: Callable[[S], Any]) -> T:
    """Run `steps` to their end, `perform` doing each: what they end with."""
    outcome = None
    while not isinstance(step := _next(steps, outcome), _Done):
        outcome = perform(step)
    return step.value


async def driven_async(steps: Steps[S, T], perform: Callable[[S], Awaitable[Any]]) -> T:
    """`driven`, each step awaited."""
    outcome = None
    while not isinstance(step := _next(steps, outcome), _Done):
        outcome = await perform(step)
    return step.value


@attrs.frozen
class _Done(Generic[T]):
    """What `steps` ended with."""

    value: T


def _next(steps: Steps[S, T], outcome: Any) -> S | _Done[T]:
    """`steps`' next step, sent the last one's `outcome`; `_Done` with their end."""
    try:
        return steps.send(outcome)
    except StopIteration as stop:
        return _Done(stop.value)
