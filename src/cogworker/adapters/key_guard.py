"""KeyGuard: find cogworker keys that hold another Redis type than they should.

A key of the wrong type (a queue someone SET by hand, say) would make every
script touching it fail with a bare WRONGTYPE; checked up front, it can be
named and worked around instead.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient


@attrs.frozen(kw_only=True)
class WrongType:
    """A key that holds `actual` where cogworker needs `expected`."""

    key: str
    actual: str
    expected: str

    def __str__(self) -> str:
        return f"{self.key} is a {self.actual}, cogworker needs a {self.expected}"


#: The layout number's key: read before everything else at a start, so also checked alone.
LAYOUT_TYPE = {keys.LAYOUT: "string"}


def expected_types(queues: tuple[str, ...]) -> dict[str, str]:
    """The Redis type of every fixed key and of the given queues' lists and sets (their
    waiting jobs, their jobs left for a reconciler) and of their sets' jid indexes."""
    expected = {
        keys.QUEUES: "set",
        keys.PROCESSES: "set",
        keys.PERIODIC_SCHEDULE: "hash",
        **LAYOUT_TYPE,
    }
    expected.update({keys.queue(name): "list" for name in queues})
    expected.update(
        {keys.sorted_set(kind, name): "zset" for name in queues for kind in keys.SET_NAMES}
    )
    expected.update({keys.located(name): "hash" for name in queues})
    expected.update(
        {keys.left_list(kind, name): "list" for name in queues for kind in keys.LEFT_LIST_NAMES}
    )
    return expected


def process_types(identities: tuple[str, ...]) -> dict[str, str]:
    """The Redis type of each registered process's keys."""
    expected: dict[str, str] = {}
    for identity in identities:
        expected[keys.process(identity)] = "hash"
        expected[keys.workers(identity)] = "hash"
        expected[keys.memory_history(identity)] = "zset"
        expected[keys.process_queues(identity)] = "set"
    return expected


def wrong_types(client: RedisClient, expected: Mapping[str, str]) -> list[WrongType]:
    """The keys among `expected` that exist with another type (one round trip)."""
    pipe = pipelines.pipeline(client)
    for key in expected:
        pipe.type(key)
    found = [reply.decode() if isinstance(reply, bytes) else reply for reply in pipe.execute()]
    return [
        WrongType(key=key, actual=actual, expected=want)
        for (key, want), actual in zip(expected.items(), found, strict=True)
        if actual not in ("none", want)
    ]
