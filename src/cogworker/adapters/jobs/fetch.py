"""Fetch: jobs taken off their queues, into a process's in-progress list of each queue
(reliable fetch) or outright (basic fetch: lost if the process dies before they end).

A fetch script works on one queue (every key in its slot).  A fetch over
several queues is a plan (docs/redis-cluster.md, "Fetch: several queues"):
the first queue of the order for the whole batch; when that falls short,
one round trip of each other queue's length (and pause flag), then one of
the fetch calls, each asking a queue for at most what its length showed, in
order, never more than the batch in all.

The reliable fetch also takes the concurrency places (`domain.key_limits`)
of the jobs it moves whose class the caller names (`PlaceTerm`), in the
same script: a limited job costs no round trip of its own as it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.limit_store import PlaceTerm
from cogworker.adapters.redis_client import RedisClient, RedisPipeline
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
    jid, holders, ...; see fetch.lua).  A script looks at one queue: `queues` is it."""
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


def _queue_keys(name: str) -> tuple[str, str]:
    """A queue's list, then its pause flag: the keys the fetch scripts take after the list."""
    return keys.queue(name), keys.queue_paused(name)


#: Sends one queue's fetch script on a pipeline, asking for so many jobs.
QueueCall = Callable[[RedisPipeline, str, int], None]
#: Reads one queue's fetch script reply as a Turn.
ReplyReader = Callable[[str, list[Any]], Turn]


def _planned(
    client: RedisClient, order: Sequence[str], count: int, call: QueueCall, read: ReplyReader
) -> Turn:
    """The fetch plan over the queues in `order`, for at most `count` jobs in all.

    The first queue is asked for all of them (under load that fills the batch: one
    round trip, as before the lists were per queue).  Short of it, one pipelined round
    trip of each other queue's LLEN and pause flag, then one of a fetch per non-empty
    running queue, in order, each asking at most its length until the batch is planned:
    a queue that emptied meanwhile gives fewer, none gives more.  A job pushed onto an
    earlier queue after its LLEN waits for the next fetch.
    """
    first = _run_calls(client, [(order[0], count)], call, read)
    rest = order[1:]
    if len(first.jobs) >= count or not rest:
        return first
    pipe = pipelines.pipeline(client)
    for name in rest:
        pipe.llen(keys.queue(name))
        pipe.exists(keys.queue_paused(name))
    replies = pipe.execute()
    paused = set(first.paused) | {n for n, flag in zip(rest, replies[1::2], strict=True) if flag}
    asks, left = [], count - len(first.jobs)
    for name, length in zip(rest, replies[::2], strict=True):
        if left and length and name not in paused:
            asks.append((name, min(int(length), left)))
            left -= asks[-1][1]
    then = _run_calls(client, asks, call, read)
    return Turn(jobs=[*first.jobs, *then.jobs], paused=frozenset(paused | then.paused))


def _run_calls(
    client: RedisClient, asks: Sequence[tuple[str, int]], call: QueueCall, read: ReplyReader
) -> Turn:
    """The fetch scripts of `asks` (queue, how many) in one round trip, as one Turn."""
    if not asks:
        return Turn(jobs=[], paused=_RUNNING)
    pipe = pipelines.pipeline(client)
    for name, wanted in asks:
        call(pipe, name, wanted)
    turns = [
        read(name, reply)
        for (name, _), reply in zip(asks, scripts.run_pipeline(client, pipe), strict=True)
    ]
    jobs = [job for turn in turns for job in turn.jobs]
    return Turn(jobs=jobs, paused=frozenset(name for turn in turns for name in turn.paused))


@attrs.define
class FetchStore:
    """Fetches on one Redis.

    A queue's pause is a flag key in its slot (`keys.queue_paused`).  The
    fetch scripts get the queue's flag next to the queue, skip a paused
    queue and say so in their reply: the hot path stays one `EVALSHA`, and a
    job is never moved from a queue paused at that moment.  The blocking
    waits (the idle paths) can't look at a flag, so the same round trip
    reads it after them: Redis runs a connection's commands in order, and a
    blocked one holds back those behind it, so the answer says whether the
    queue was paused once the move was done (a job taken then is one to put
    back, not run).  The wait's keys and the flag are in the queue's slot:
    on a cluster the read goes to the same node.
    """

    client: RedisClient

    def fetch(
        self, identity: str, order: Sequence[str], count: int, terms: Sequence[PlaceTerm] = ()
    ) -> Turn:
        """Take up to `count` jobs into `identity`'s in-progress lists, queues in the order
        given (the paused ones left alone; see `_planned`), and the concurrency places of
        those of the classes `terms` name."""
        places = [arg for term in terms for arg in term.arguments()]

        def call(pipe: RedisPipeline, name: str, wanted: int) -> None:
            held_keys = (keys.in_progress(name, identity), *_queue_keys(name))
            scripts.FETCH.queue(pipe, held_keys, (wanted, *places))

        def read(name: str, reply: list[Any]) -> Turn:
            flagged, looked, *pairs = reply
            return _turn([name], flagged, pairs, looked)

        return _planned(self.client, order, count, call, read)

    def pop(self, order: Sequence[str], count: int) -> Turn:
        """Basic fetch: pop up to `count` jobs outright, queues in the order given (the
        paused ones left alone), by the same plan as `fetch`."""

        def call(pipe: RedisPipeline, name: str, wanted: int) -> None:
            scripts.POP.queue(pipe, _queue_keys(name), (wanted,))

        def read(name: str, reply: list[Any]) -> Turn:
            flagged, *pairs = reply
            return _turn([name], flagged, pairs)

        return _planned(self.client, order, count, call, read)

    def fetch_blocking(self, identity: str, queue: str, timeout: float) -> Turn:
        """Wait up to `timeout` seconds for a job on `queue`, taken into the in-progress list;
        then whether `queue` is paused."""
        pipe = pipelines.pipeline(self.client)
        # The same ends as the fetch script: the oldest job (queues are LPUSHed), onto
        # the list's left.  redis-py's defaults (LEFT to RIGHT) would take the newest.
        pipe.blmove(
            keys.queue(queue),
            keys.in_progress(queue, identity),
            max(1, round(timeout)),
            src="RIGHT",
            dest="LEFT",
        )
        pipe.exists(keys.queue_paused(queue))
        raw, flag = pipe.execute()
        jobs = [] if raw is None else [Fetched(queue=queue, raw=as_bytes(raw))]
        return Turn(jobs=jobs, paused=frozenset([queue]) if flag else _RUNNING)

    def pop_blocking(self, queue: str, timeout: float) -> Turn:
        """Basic fetch: wait up to `timeout` seconds to pop a job of `queue` outright (lost if
        this process dies before it ends); then whether `queue` is paused."""
        pipe = pipelines.pipeline(self.client)
        pipe.brpop([keys.queue(queue)], timeout)
        pipe.exists(keys.queue_paused(queue))
        reply, flag = pipe.execute()
        paused = frozenset([queue]) if flag else _RUNNING
        jobs = [] if reply is None else [Fetched(queue=queue, raw=as_bytes(reply[1]))]
        return Turn(jobs=jobs, paused=paused)

    def in_progress(self, identity: str, queue: str) -> list[bytes]:
        """The payloads on `identity`'s in-progress list of `queue`."""
        held = self.client.lrange(keys.in_progress(queue, identity), 0, -1)
        return [as_bytes(entry) for entry in held]

    def requeue_one(self, identity: str, job: Fetched) -> bool:
        """Put one job of `identity`'s in-progress list back at the front of its queue."""
        pipe = pipelines.pipeline(self.client)
        scripts.REQUEUE_ONE.queue(
            pipe, (keys.in_progress(job.queue, identity), keys.queue(job.queue)), (job.raw,)
        )
        pipe.sadd(keys.QUEUES, job.queue)  # after the job is back (see move_due.lua)
        return bool(scripts.run_pipeline(self.client, pipe)[0])

    def push_back(self, job: Fetched) -> None:
        """Basic fetch: put a popped job back at the front of its queue."""
        pipe = pipelines.pipeline(self.client)
        pipe.rpush(keys.queue(job.queue), job.raw)
        pipe.sadd(keys.QUEUES, job.queue)  # after the job is back, as requeue_one
        pipe.execute()
