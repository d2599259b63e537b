"""The lists each queue keeps of jobs left for a reconciler (`redis_keys.LEFT_LIST_NAMES`):
settlements handed over at a stop, repeat orphans and repeat hand-backs parked for dead.

Each queue's are in its slot (layout step 9), written by a script that registered the
queue in `cogworker:parts` before; a reconciler reads those of every part, and of the
part of the empty queue name (where `cogworker migrate` put entries naming no queue), in
one round trip, and works on the non-empty ones only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast

import attrs

from cogworker.adapters import parts, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes


@attrs.frozen(kw_only=True)
class LeftList:
    """One queue's list of `name` (one of `LEFT_LIST_NAMES`) and its entries, oldest first."""

    name: str
    queue: str
    entries: tuple[bytes, ...]

    @property
    def key(self) -> str:
        """The list's key, in the queue's slot."""
        return keys.left_list(self.name, self.queue)

    @property
    def holder(self) -> tuple[str, Literal["list"]]:
        """The list as a burial takes an entry off it."""
        return self.key, "list"


def left_lists(client: RedisClient, names: Sequence[str]) -> list[LeftList]:
    """The non-empty lists of `names` of every part and of the empty queue name's."""
    queues = parts.queues(cast("set[bytes]", client.smembers(keys.PARTS)))
    pipe = pipelines.pipeline(client)
    wanted = [(name, queue) for name in names for queue in queues]
    for name, queue in wanted:
        pipe.lrange(keys.left_list(name, queue), 0, -1)
    return [
        LeftList(name=name, queue=queue, entries=tuple(as_bytes(entry) for entry in entries))
        for (name, queue), entries in zip(wanted, pipe.execute(), strict=True)
        if entries
    ]
