"""Run: what a run's start writes: a unique lock taken or let go of, a duplicate of a
running job put back for later, a tracked job marked working."""

from __future__ import annotations

import attrs

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.status_marks import queue_mark
from cogworker.adapters.redis_client import RedisClient
from cogworker.domain.retries import LONGEST_DELAY


@attrs.define
class RunStore:
    """Run-start writes on one Redis."""

    client: RedisClient
    #: How long a tracked job's status is kept after its last change.
    status_ttl: float = 30 * 60

    def take_lock(self, lock: str, jid: str, ttl: float) -> bool:
        """Take a lock for `jid` if it is free or already `jid`'s (its TTL starts again).

        A TTL longer than the longest delay (say a payload's 1e300) is held that long.
        """
        seconds = ttl if 0 < ttl < LONGEST_DELAY else LONGEST_DELAY
        return bool(scripts.TAKE_LOCK(self.client, (lock,), (jid, max(1, int(seconds * 1000)))))

    def release_lock(self, lock: str, jid: str) -> bool:
        """Let go of a lock `jid` holds; False if it was gone or someone else's."""
        return bool(scripts.RELEASE_LOCK(self.client, (lock,), (jid,)))

    def defer(
        self, identity: str | None, job: Fetched, at: float, filed: str = "", *, jid: str
    ) -> bool:
        """Move a job off `identity`'s in-progress list to its queue's scheduled set, to run
        at `at` (as the payload `filed`, if given); `identity` None is basic fetch (no list).
        The queue's part is registered first (a merged read never misses the entry)."""
        holders = (
            keys.in_progress(job.queue, identity or ""),
            keys.schedule(job.queue),
            keys.located(job.queue),
        )
        owned = "0" if identity is None else "1"
        pipe = pipelines.pipeline(self.client)
        pipe.sadd(keys.PARTS, job.queue)
        scripts.DEFER.queue(pipe, holders, (job.raw, at, filed, owned, jid))
        return bool(scripts.run_pipeline(self.client, pipe)[-1])

    def set_status(self, queue: str, jid: str, status: str, now: float) -> None:
        """Set a tracked job's status outside a settlement (it started working, say)."""
        pipe = pipelines.pipeline(self.client)
        queue_mark(pipe, queue, jid, status, now, self.status_ttl)
        pipe.execute()
