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


@attrs.frozen(kw_only=True)
class Turn:
    """What one fetch brought: the jobs taken, and which of the watched queues were paused
    just after the take (read in the same round trip, after the move)."""

    jobs: list[Fetched]
    paused: frozenset[str]


@attrs.define
class FetchStore:
    """Fetches on one Redis.

    Every fetch sends, after its move and in the same pipeline, one
    `SMISMEMBER` of the paused set (`adapters/queue_pause.py`) for the
    queues it is told to watch.  Redis runs a connection's commands in
    order, and a blocked one holds back those behind it, so the answer
    says which queues were paused once the move was done, even when the
    move waited: a job taken from a queue paused by then is one to put
    back, not run.  It costs no round trip.
    """

    client: redis.Redis

    def fetch(
        self, identity: str, queues: Sequence[str], count: int, watching: Sequence[str] = ()
    ) -> Turn:
        """Take up to `count` jobs into `identity`'s in-progress list, queues in the order given."""
        pipe = self.client.pipeline(transaction=False)
        scripts.FETCH.queue(pipe, (keys.in_progress(identity), *map(keys.queue, queues)), (count,))
        reply, paused = self._run(pipe, watching)
        return Turn(jobs=_fetched(queues, reply), paused=paused)

    def pop(self, queues: Sequence[str], count: int, watching: Sequence[str] = ()) -> Turn:
        """Basic fetch: pop up to `count` jobs outright, queues in the order given."""
        pipe = self.client.pipeline(transaction=False)
        scripts.POP.queue(pipe, [keys.queue(q) for q in queues], (count,))
        reply, paused = self._run(pipe, watching)
        return Turn(jobs=_fetched(queues, reply), paused=paused)

    def fetch_blocking(
        self, identity: str, queue: str, timeout: float, watching: Sequence[str] = ()
    ) -> Turn:
        """Wait up to `timeout` seconds for a job on `queue`, taken into the in-progress list."""
        pipe = self.client.pipeline(transaction=False)
        # The same ends as the fetch script: the oldest job (queues are LPUSHed), onto
        # the list's left.  redis-py's defaults (LEFT to RIGHT) would take the newest.
        pipe.blmove(
            keys.queue(queue),
            keys.in_progress(identity),
            max(1, round(timeout)),
            src="RIGHT",
            dest="LEFT",
        )
        raw, paused = self._run(pipe, watching)
        jobs = [] if raw is None else [Fetched(queue=queue, raw=as_bytes(raw))]
        return Turn(jobs=jobs, paused=paused)

    def pop_basic(
        self, queues: Sequence[str], timeout: float, watching: Sequence[str] = ()
    ) -> Turn:
        """Basic fetch: pop a job outright (lost if this process dies before it ends)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.brpop([keys.queue(name) for name in queues], timeout)
        reply, paused = self._run(pipe, watching)
        if reply is None:
            return Turn(jobs=[], paused=paused)
        key, raw = reply
        name = as_bytes(key).decode()[len(keys.QUEUE_PREFIX) :]
        return Turn(jobs=[Fetched(queue=name, raw=as_bytes(raw))], paused=paused)

    def paused(self, watching: Sequence[str]) -> frozenset[str]:
        """Which of the `watching` queues are paused now."""
        _, paused = self._run(self.client.pipeline(transaction=False), watching)
        return paused

    def _run(
        self, pipe: redis.client.Pipeline, watching: Sequence[str]
    ) -> tuple[Any, frozenset[str]]:
        """`pipe`'s one reply (if it holds a command), then which of `watching` are paused."""
        if watching:
            pipe.smismember(keys.PAUSED, list(watching))
        replies = scripts.run_pipeline(self.client, pipe)
        flags = replies.pop() if watching else []
        paused = frozenset(name for name, flag in zip(watching, flags, strict=True) if flag)
        return (replies[0] if replies else None), paused

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

    def push_back(self, job: Fetched) -> None:
        """Basic fetch: put a popped job back at the front of its queue."""
        pipe = self.client.pipeline(transaction=False)
        pipe.rpush(keys.queue(job.queue), job.raw)
        pipe.sadd(keys.QUEUES, job.queue)  # after the job is back, as requeue_one
        pipe.execute()
