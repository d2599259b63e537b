"""The dashboard's reads and actions on the queues: sizes and latency, pages of jobs,
deleting jobs (one, or a whole queue's, batch by batch), pausing and resuming."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs
import redis

from cogworker.adapters import pipelines, queue_pause, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_removal import Removal, remove
from cogworker.adapters.flagged_reads import refusal, replies
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes

#: `dashboard_remove`'s head for taking entries off a queue (see its header).
LIST_DELETE = ("list", "delete", "", 0, 0)
#: Entries of a queue `Client.cancel` and the dashboard's delete look through for a jid.
QUEUE_SEARCH_DEPTH = 10_000
#: Entries one dashboard `find` call looks at: well under a millisecond of Redis.
FIND_CHUNK = 500


@attrs.frozen(kw_only=True)
class QueuePage:
    """A page of a queue: its size and jobs, or (None) why its key can't be read as one."""

    size: int | None
    entries: tuple[bytes, ...]
    problem: str | None = None


@attrs.define
class QueueStore:
    """The queues of one Redis, as the dashboard reads and clears them."""

    client: RedisClient

    def names(self) -> list[str]:
        """Every registered or paused queue, by name (one that isn't UTF-8 escaped: no key has
        that name)."""
        pipe = pipelines.pipeline(self.client)
        pipe.smembers(keys.QUEUES)
        pipe.smembers(keys.PAUSED)
        registered, paused = pipe.execute()
        return sorted(queue_pause.names_of(registered) | queue_pause.names_of(paused))

    def loads(self, now: float) -> list[tracking.QueueLoad]:
        """Every registered queue with its size and latency, by name."""
        return tracking.queues(self.client, now)

    def set_paused(self, queue: str, *, paused: bool) -> bool:
        """Pause a queue, or let it run again (`adapters.queue_pause`); whether it changed."""
        change = queue_pause.pause if paused else queue_pause.resume
        (changed,) = change(self.client, [queue])
        return changed

    def page(self, queue: str, offset: int, count: int) -> QueuePage:
        """A queue's size and `count` jobs from `offset`, the next one to run first."""
        key = keys.queue(queue)
        pipe = pipelines.pipeline(self.client)
        pipe.llen(key)
        # Pushed on the left and taken from the right: the right end runs next.
        pipe.lrange(key, -(offset + count), -(offset + 1))
        size, entries = replies(pipe)
        problem = refusal(key, size, "list")
        if problem is not None:
            return QueuePage(size=None, entries=(), problem=problem)
        return QueuePage(size=size, entries=tuple(as_bytes(entry) for entry in reversed(entries)))

    def size(self, queue: str) -> int | None:
        """How many jobs a queue holds (None: its key isn't a list)."""
        pipe = pipelines.pipeline(self.client)
        pipe.llen(keys.queue(queue))
        (size,) = replies(pipe)
        return None if refusal(keys.queue(queue), size, "list") else int(size)

    def find(self, queue: str, text: str, first: int, count: int) -> list[bytes]:
        """Entries among `count` jobs of a queue from index `first` (0: the next to run) that
        contain `text` (none if its key isn't a list); one LRANGE of `count`."""
        return find_in_list(self.client, keys.queue(queue), text, first, count)

    def search(self, queue: str, text: str) -> Iterator[list[bytes]]:
        """`find` over a queue's first `QUEUE_SEARCH_DEPTH` jobs, a chunk at a time."""
        return search_list(self.client, keys.queue(queue), text)

    def tail(self, queue: str, count: int) -> list[bytes]:
        """The `count` jobs of a queue that run next, the next one first."""
        entries = self.client.lrange(keys.queue(queue), -count, -1)
        return [as_bytes(entry) for entry in reversed(entries)]

    def delete(self, queue: str, removals: Sequence[Removal], *, clearing: bool) -> list[bool]:
        """Remove jobs from a queue; False where one was no longer there.  `clearing`: the
        queue is unregistered once it is empty."""
        removed = remove(
            self.client, (keys.queue(queue), keys.no_lock(queue)), LIST_DELETE, removals
        )
        if clearing:
            self._unregister_if_empty(queue)
        return removed

    def _unregister_if_empty(self, queue: str) -> None:
        """Unregister an empty queue, then look again and register it back if a job came.

        Pushes register a queue right after their job (an SADD pipelined after the
        push, or move_due.lua's), so whatever order they take with this, a queue holding
        jobs ends registered.
        """
        key = keys.queue(queue)
        if self.client.llen(key):
            return
        pipe = pipelines.pipeline(self.client)
        pipe.srem(keys.QUEUES, queue)
        pipe.llen(key)
        _, size = pipe.execute()
        if size:
            self.client.sadd(keys.QUEUES, queue)


def find_in_list(client: RedisClient, key: str, text: str, first: int, count: int) -> list[bytes]:
    """Entries among `count` of a list from index `first` counted from its right end (the
    end a queue runs next) that contain `text` (none if the key isn't a list): a cheap
    first sieve, each hit is decoded by the caller.

    A plain LRANGE, filtered here, not a script: a read-only dashboard's ACL user then
    needs neither EVALSHA nor SCRIPT LOAD (which would let it load any script).
    """
    try:
        entries = client.lrange(key, -(first + count), -(first + 1))
    except redis.ResponseError as error:
        if "WRONGTYPE" not in str(error):
            raise
        return []
    wanted = text.encode()
    return [entry for entry in map(as_bytes, entries) if wanted in entry]


def search_list(client: RedisClient, key: str, text: str) -> Iterator[list[bytes]]:
    """`find_in_list` over the first `QUEUE_SEARCH_DEPTH` entries of a list from its right
    end, `FIND_CHUNK` per call (each well under a millisecond of Redis)."""
    try:
        size = int(client.llen(key))
    except redis.ResponseError as error:
        if "WRONGTYPE" not in str(error):
            raise
        return
    for first in range(0, min(size, QUEUE_SEARCH_DEPTH), FIND_CHUNK):
        yield find_in_list(client, key, text, first, FIND_CHUNK)
