"""Fetch: jobs taken off their queues, into a process's in-progress list (reliable
fetch) or outright (basic fetch: lost if the process dies before they end).

The reliable fetch also takes the concurrency places (`domain.key_limits`)
of the jobs it moves whose class the caller names (`PlaceTerm`), in the
same script: a limited job costs no round trip of its own as it starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.limit_store import PlaceTerm
from cogworker.adapters.replies import as_bytes


@attrs.frozen
class FetchedPlace:
    """What the fetch did with a job's concurrency place: took it for `jid` in `holders`
    (the limit's key), or found its key full (`holders` "")."""

    jid: str
    holders: str


@attrs.frozen(kw_only=True)
class Fetched:
    """A job as taken from a queue: its payload exactly as stored (the key for ack)."""

    queue: str
    raw: bytes
    #: Its concurrency place as the fetch found it; None: the fetch didn't look at its limit.
    place: FetchedPlace | None = None


_RUNNING: frozenset[str] = frozenset()


def _turn(
    queues: Sequence[str], flagged: list[Any], pairs: list[Any], looked: Sequence[Any] = ()
) -> Turn:
    """A fetch script's reply as a Turn: the paused queues' positions (`flagged`), queue
    position, payload, ... (`pairs`), and the places it looked at (`looked`: job number,
    jid, holders, ...; see fetch.lua)."""
    paused = frozenset(queues[int(i) - 1] for i in flagged) if flagged else _RUNNING
    places = {
        int(looked[i]): FetchedPlace(_text(looked[i + 1]), _text(looked[i + 2]))
        for i in range(0, len(looked), 3)
    }
    jobs = [
        Fetched(
            queue=queues[int(pairs[i]) - 1],
            raw=as_bytes(pairs[i + 1]),
            place=places.get(i // 2 + 1),
        )
        for i in range(0, len(pairs), 2)
    ]
    return Turn(jobs=jobs, paused=paused)


def _text(reply: bytes | str) -> str:
    # A key or jid read from a payload (valid UTF-8 as cogworker writes them).
    return as_bytes(reply).decode(errors="replace")


@attrs.frozen(kw_only=True)
class Turn:
    """What one fetch brought: the jobs taken, and which of the queues it looked at were
    paused (`adapters/queue_pause.py`).  The fetch scripts read each queue's flag in the
    same step as its take, and take nothing from a paused queue; a blocking wait reads the
    flag of the queues it waited on just after the wait, in the same round trip."""

    jobs: list[Fetched]
    paused: frozenset[str]


def _queue_keys(queues: Sequence[str]) -> list[str]:
    """Each queue's list, then its pause flag: the pairs the fetch scripts take."""
    return [key for name in queues for key in (keys.queue(name), keys.queue_paused(name))]


@attrs.define
class FetchStore:
    """Fetches on one Redis.

    A queue's pause is a flag key in its slot (`keys.queue_paused`).  The
    fetch scripts get each queue's flag next to the queue, skip a paused
    queue and say which were paused in their reply: the hot path stays one
    `EVALSHA`, and a job is never moved from a queue paused at that moment.
    The blocking waits (the idle paths) can't look at a flag, so the same
    round trip reads it after them: Redis runs a connection's commands in
    order, and a blocked one holds back those behind it, so the answer says
    whether the queue was paused once the move was done (a job taken then
    is one to put back, not run).  For `BLMOVE` both keys and the flag are
    in the queue's slot: on a cluster the read goes to the same node.
    """

    client: redis.Redis

    def fetch(
        self, identity: str, queues: Sequence[str], count: int, terms: Sequence[PlaceTerm] = ()
    ) -> Turn:
        """Take up to `count` jobs into `identity`'s in-progress list, queues in the order given
        (the paused ones left alone), and the concurrency places of those of the classes
        `terms` name."""
        flagged, looked, *pairs = scripts.FETCH(
            self.client,
            (keys.in_progress(identity), *_queue_keys(queues)),
            (count, *(arg for term in terms for arg in term.arguments())),
        )
        return _turn(queues, flagged, pairs, looked)

    def pop(self, queues: Sequence[str], count: int) -> Turn:
        """Basic fetch: pop up to `count` jobs outright, queues in the order given (the paused
        ones left alone)."""
        flagged, *pairs = scripts.POP(self.client, _queue_keys(queues), (count,))
        return _turn(queues, flagged, pairs)

    def fetch_blocking(self, identity: str, queue: str, timeout: float) -> Turn:
        """Wait up to `timeout` seconds for a job on `queue`, taken into the in-progress list;
        then whether `queue` is paused."""
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
        pipe.exists(keys.queue_paused(queue))
        raw, flag = pipe.execute()
        jobs = [] if raw is None else [Fetched(queue=queue, raw=as_bytes(raw))]
        return Turn(jobs=jobs, paused=frozenset([queue]) if flag else _RUNNING)

    def pop_basic(self, queues: Sequence[str], timeout: float) -> Turn:
        """Basic fetch: pop a job outright (lost if this process dies before it ends); then
        which of `queues` are paused."""
        pipe = self.client.pipeline(transaction=False)
        pipe.brpop([keys.queue(name) for name in queues], timeout)
        for name in queues:
            pipe.exists(keys.queue_paused(name))
        reply, *flags = pipe.execute()
        paused = frozenset(name for name, flag in zip(queues, flags, strict=True) if flag)
        if reply is None:
            return Turn(jobs=[], paused=paused)
        key, raw = reply
        name = as_bytes(key).decode()[len(keys.QUEUE_PREFIX) :]
        return Turn(jobs=[Fetched(queue=name, raw=as_bytes(raw))], paused=paused)

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
