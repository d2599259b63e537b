"""Fetch: jobs taken off their queues, into a process's in-progress list (reliable
fetch) or outright (basic fetch: lost if the process dies before they end)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.replies import as_bytes


@attrs.frozen(kw_only=True)
class Fetched:
    """A job as taken from a queue: its payload exactly as stored (the key for ack)."""

    queue: str
    raw: bytes


def _fetched(queues: Sequence[str], reply: list[Any]) -> list[Fetched]:
    """A fetch script's flat reply (queue position, payload, ...) as Fetched jobs."""
    return [
        Fetched(queue=queues[int(reply[i]) - 1], raw=as_bytes(reply[i + 1]))
        for i in range(0, len(reply), 2)
    ]


@attrs.define
class FetchStore:
    """Fetches on one Redis."""

    client: redis.Redis

    def fetch(self, identity: str, queues: Sequence[str], count: int) -> list[Fetched]:
        """Take up to `count` jobs into `identity`'s in-progress list, queues in the order given."""
        reply = scripts.FETCH(
            self.client, (keys.in_progress(identity), *map(keys.queue, queues)), (count,)
        )
        return _fetched(queues, reply)

    def pop(self, queues: Sequence[str], count: int) -> list[Fetched]:
        """Basic fetch: pop up to `count` jobs outright, queues in the order given."""
        return _fetched(queues, scripts.POP(self.client, [keys.queue(q) for q in queues], (count,)))

    def fetch_blocking(self, identity: str, queue: str, timeout: float) -> Fetched | None:
        """Wait up to `timeout` seconds for a job on `queue`, taken into the in-progress list."""
        # The same ends as the fetch script: the oldest job (queues are LPUSHed), onto
        # the list's left.  redis-py's defaults (LEFT to RIGHT) would take the newest.
        raw = self.client.blmove(
            keys.queue(queue),
            keys.in_progress(identity),
            max(1, round(timeout)),
            src="RIGHT",
            dest="LEFT",
        )
        return None if raw is None else Fetched(queue=queue, raw=as_bytes(raw))

    def pop_basic(self, queues: Sequence[str], timeout: float) -> Fetched | None:
        """Basic fetch: pop a job outright (lost if this process dies before it ends)."""
        reply = self.client.brpop([keys.queue(name) for name in queues], timeout)
        if reply is None:
            return None
        key, raw = reply
        return Fetched(queue=as_bytes(key).decode()[len(keys.QUEUE_PREFIX) :], raw=as_bytes(raw))

    def in_progress(self, identity: str) -> list[bytes]:
        """The payloads on `identity`'s in-progress list."""
        return [as_bytes(entry) for entry in self.client.lrange(keys.in_progress(identity), 0, -1)]

    def requeue_one(self, identity: str, job: Fetched) -> bool:
        """Put one job of `identity`'s in-progress list back at the front of its queue."""
        pipe = self.client.pipeline(transaction=False)
        scripts.REQUEUE_ONE.queue(
            pipe, (keys.in_progress(identity), keys.queue(job.queue)), (job.raw,)
        )
        pipe.sadd(keys.QUEUES, job.queue)  # after the job is back (see move_due.lua)
        return bool(scripts.run_pipeline(self.client, pipe)[0])
