"""The calls in flight on an `AsyncClient`, so that closing it waits for them.

A redis.asyncio pool closed under a call in flight lets that call open a
new connection, which nothing closes then: `aclose` would leak one
connection per enqueue still running.  So the client's public methods run
as open calls, and closing refuses new ones, waits until the open ones
have ended, and only then closes the connections.  A call that may wait as
long as it is asked (a result's wait) is interrupted by the close instead:
it raises `ClientClosedError`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from cogworker.exceptions import ClientClosedError

P = ParamSpec("P")
R = TypeVar("R")


class OpenCalls:
    """How many calls are in flight, and whether new ones are still accepted."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._open = 0
        self._closing = False
        self._none_open = asyncio.Event()
        self._none_open.set()
        self._interruptible: set[asyncio.Future[Any]] = set()

    def begin(self) -> None:
        """Count a call in, or refuse it once closing began."""
        if self._closing:
            raise self._closed()
        self._open += 1
        self._none_open.clear()

    def end(self) -> None:
        """Count a call out."""
        self._open -= 1
        if not self._open:
            self._none_open.set()

    async def interruptible(self, call: Coroutine[Any, Any, R]) -> R:
        """Await `call`, which a close interrupts: it then raises `ClientClosedError` (a
        cancel of the caller's own task stays a cancel)."""
        waiting = asyncio.ensure_future(call)
        self._interruptible.add(waiting)
        try:
            return await waiting
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if self._closing and (caller is None or not caller.cancelling()):
                raise self._closed() from None
            raise
        finally:
            self._interruptible.discard(waiting)

    async def close(self) -> None:
        """Refuse new calls, interrupt the interruptible ones, and return once every open
        call has ended."""
        self._closing = True
        for waiting in self._interruptible:
            waiting.cancel()
        await self._none_open.wait()

    def _closed(self) -> ClientClosedError:
        return ClientClosedError(f"this {self.owner} is closed (aclose was called)")


class HasOpenCalls(Protocol):
    """What `while_open` needs of the object whose method it wraps."""

    @property
    def open_calls(self) -> OpenCalls: ...


S = TypeVar("S", bound=HasOpenCalls)


def while_open(
    method: Callable[Concatenate[S, P], Awaitable[R]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """`method` run as an open call of its object: refused once it is closing, waited for
    by its close."""

    @functools.wraps(method)
    async def counted(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self.open_calls.begin()
        try:
            return await method(self, *args, **kwargs)
        finally:
            self.open_calls.end()

    return counted
