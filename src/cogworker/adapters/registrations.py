"""What a store registered lately in a global registry (a queue in `cogworker:queues` or
`cogworker:parts`, a class's lasting metrics), so that it sends the registration again
only every so often: a registry lost with Redis's data, or cleared, is whole again
within `REGISTER_EVERY`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

import attrs

#: How long a store trusts what it registered to stay registered (seconds).
REGISTER_EVERY = 60.0

K = TypeVar("K", bound=Hashable)


@attrs.define
class Registrations(Generic[K]):
    """The items a store registered lately, by when (`now` as its caller gives it, else
    its monotonic clock).  Threads may race on it: the worst is a registration sent twice."""

    every: float = REGISTER_EVERY
    clock: Callable[[], float] = time.monotonic
    _at: dict[K, float] = attrs.field(factory=dict)

    def due(self, items: Iterable[K], now: float | None = None) -> list[K]:
        """Those of `items` not registered for `every` seconds, in order, once each."""
        at = self.clock() if now is None else now
        return [
            item
            for item in dict.fromkeys(items)
            if at - self._at.get(item, -math.inf) >= self.every
        ]

    def done(self, items: Iterable[K], now: float | None = None) -> None:
        """Note `items` as registered (after the registration's round trip came back)."""
        at = self.clock() if now is None else now
        for item in items:
            self._at[item] = at
