"""The counters (processed, failed, cancelled, expired), in total and per UTC day, read
back summed over queues.

Each queue keeps its own counters in its slot (`redis_keys.stat`), written by
the script that ends a job there (settle, ack_many, cancel), its queue
registered in `cogworker:parts` before.  A reading sums them over the queues
`adapters.parts.queues` names: the registered ones and the migrated part,
which holds the counters the layout before kept for all queues at once.

A reading is the parts' `SMEMBERS`, then a pipeline of one `MGET` per
queue (of that queue's counters, all in its slot): a round trip each, and
no multi-key command across queues (their slots differ on a cluster).  An
`MGET` answers nil for a key of another type: such a counter reads 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from cogworker.adapters import parts, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.flagged_reads import Flags, replies
from cogworker.adapters.redis_client import RedisClient, RedisPipeline, queue_mget

#: A counter by name (`processed`...) and UTC day (None: its total).
Counter = tuple[str, str | None]


@attrs.frozen
class CounterRead:
    """A reading of `counters`, each summed over `queues` (`parts.queues`: never none),
    queued on a pipeline."""

    queues: tuple[str, ...]
    counters: tuple[Counter, ...]

    def queue(self, pipe: RedisPipeline) -> None:
        """Queue one MGET per queue of its counters (a queue's counters share its slot)."""
        for queue in self.queues:
            queue_mget(pipe, [keys.stat(queue, name, day) for name, day in self.counters])

    def sums(self, found: Sequence[object], flags: Flags) -> list[int | None]:
        """Each counter summed over the queues, from the MGETs' replies (one a queue, in the
        order queued); None where a queue's counter isn't a count (named in `flags`)."""
        counts = [
            self._counts(queue, reply, flags)
            for queue, reply in zip(self.queues, found, strict=True)
        ]
        return [
            None if None in column else sum(n for n in column if n is not None)
            for column in zip(*counts, strict=True)
        ]

    def _counts(self, queue: str, reply: object, flags: Flags) -> list[int | None]:
        """One queue's counters (None: not a count, or the MGET refused: named in `flags`)."""
        values = reply if isinstance(reply, list) else [reply] * len(self.counters)
        return [
            flags.count(keys.stat(queue, name, day), value)
            for (name, day), value in zip(self.counters, values, strict=True)
        ]


def read(client: RedisClient, counters: Sequence[Counter], flags: Flags) -> list[int | None]:
    """`counters`, each summed over every queue's part, in two round trips (see
    `CounterRead.sums`)."""
    pipe = pipelines.pipeline(client)
    pipe.smembers(keys.PARTS)
    (registered,) = replies(pipe)
    queues = parts.queues(flags.checked(keys.PARTS, registered, "set") or ())
    reading = CounterRead(queues, tuple(counters))
    pipe = pipelines.pipeline(client)
    reading.queue(pipe)
    return reading.sums(replies(pipe), flags)
