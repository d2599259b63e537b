"""Due: the scheduled and retry entries whose time has come, onto their queues.

Each queue has its own scheduled and retry sets (layout step 8): a poll
looks at every queue's in one round trip (`due_sets`), then reads the due
entries of each set holding some and moves them, each with one `move_due`
in the set's queue's slot: the `ZREM` in it is the claim, so of any number
of pollers exactly one moves each entry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

import attrs

from cogworker.adapters import parts, pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes


def jid_in(payload: str) -> str:
    """The jid of a payload to push (a job's JSON as `domain.payload` encodes it)."""
    jid = json.loads(payload).get("jid")
    return jid if isinstance(jid, str) else ""


@attrs.define
class DueStore:
    """Due entries of the scheduled and retry sets on one Redis."""

    client: RedisClient

    def due_sets(self, now: float) -> list[tuple[str, str]]:
        """The scheduled and retry sets holding an entry whose time has come, each with its
        queue: the parts' `SMEMBERS`, then one round trip of a `ZRANGEBYSCORE ... LIMIT 0 1`
        per set of every queue of `parts` (and of the migrated part)."""
        names = parts.queues(cast("set[bytes]", self.client.smembers(keys.PARTS)))
        polled = [(key(queue), queue) for queue in names for key in (keys.schedule, keys.retry)]
        pipe = pipelines.pipeline(self.client)
        for sorted_set, _ in polled:
            pipe.zrangebyscore(sorted_set, "-inf", now, 0, 1)
        return [place for place, first in zip(polled, pipe.execute(), strict=True) if first]

    def due(self, sorted_set: str, now: float, limit: int) -> list[bytes]:
        """Entries of a scheduled or retry set whose time has come, oldest first."""
        return [
            as_bytes(entry)
            for entry in cast(
                "list[bytes | str]", self.client.zrangebyscore(sorted_set, "-inf", now, 0, limit)
            )
        ]

    def move_due(self, sorted_set: str, moves: Sequence[tuple[bytes, str, str]]) -> list[bool]:
        """Move (entry, queue, payload) triples of one queue's set onto their queue (the
        set's); True where this call did.

        Each queue is registered right after its move (see move_due.lua); the set's jid
        index forgets each job the move takes off, in the same script."""
        located = keys.located_of(sorted_set)
        pipe = pipelines.pipeline(self.client)
        for entry, queue, payload in moves:
            move_keys = (sorted_set, keys.queue(queue), located)
            scripts.MOVE_DUE.queue(pipe, move_keys, (entry, payload, jid_in(payload)))
            pipe.sadd(keys.QUEUES, queue)
        replies = scripts.run_pipeline(self.client, pipe)
        return [bool(reply) for reply in replies[::2]]
