"""A job's own records in its queue's slot, and where to find them by jid (layout step 5).

Its status hash, failed attempts, runs, and its orphanings and hand-backs
counters are `cogworker:{q:Q}:...:J`, written by the scripts that push,
end or move the job, with keys named by its queue.  A reader knowing only
the jid finds Q through the jid index (`jid_index.locate`, with `probe`);
a push or settlement writing the status, attempts or history pipelines
the index entry before its script (`index`).  The records the layout
before kept are in the part of the empty queue name (`parts.MIGRATED`:
their names didn't say their queue), so a reader reads there too.
"""

from __future__ import annotations

from collections.abc import Iterable

from cogworker.adapters import jid_index, parts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jid_index import JidIndex
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient


def probe(jid: str) -> jid_index.Probe:
    """The keys of `jid`'s status, attempts and history in a queue's slot (`locate`'s)."""
    return lambda queue: (
        keys.status(queue, jid),
        keys.job_attempts(queue, jid),
        keys.history(queue, jid),
    )


def index(jid: str, queue: str, ttls: Iterable[float]) -> JidIndex | None:
    """The index entry a write of `jid`'s records on `queue` lasting `ttls` seconds (0: a
    record it doesn't write) pipelines before its script: as long as the longest; None
    when it writes none.  A job keeping its result writes its result's entry instead."""
    longest = int(max(ttls, default=0))
    return JidIndex(jid, queue, longest, records_only=True) if longest > 0 else None


def settled_index(outcome: OutcomeRecord, queue: str, kept: Retention) -> JidIndex | None:
    """The index entry a settlement (or cancel) writing `outcome` on `queue` pipelines
    before its script, for the status, attempt and run of the job's own it writes (as long
    as the longest of them lasts); None when it writes none (a plain ack), or when the job
    keeps its result (its result's entry, written instead, names the same queue)."""
    if outcome.result is not None:
        return None
    ttls = (
        kept.status_ttl if outcome.status else 0,
        kept.attempts_ttl if outcome.attempt else 0,
        kept.history_ttl if outcome.history and outcome.history_per_job else 0,
    )
    return index(outcome.jid, queue, ttls)


def holders(client: RedisClient, jid: str) -> tuple[str, ...]:
    """The queues whose slots may hold `jid`'s records, the likeliest first: the one the
    index names (or the probe finds), then the migrated part."""
    return holders_of(jid_index.locate(client, jid, probe(jid)))


async def holders_async(client: AsyncRedisClient, jid: str) -> tuple[str, ...]:
    """`holders` through a redis.asyncio client."""
    return holders_of(await jid_index.locate_async(client, jid, probe(jid)))


def holders_of(found: jid_index.Located | None) -> tuple[str, ...]:
    """The queues to read a jid's records in, once it was located in `found` (None: in
    no registered queue): that one first, then the migrated part."""
    if found is None:
        return (parts.MIGRATED,)
    return tuple(dict.fromkeys((found.queue, parts.MIGRATED)))
