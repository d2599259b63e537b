"""Reading what the engine records: statuses, attempts, run history, live work,
memory history and the counters.  Cheap reads: each function is one round trip, or
two where it merges the queues' shares (the counters, a class's runs: the parts first)
or reads a job's records by jid (its queue's name first: `adapters.job_records`).

Attempts and runs come back as their records (`domain.records`); one that
can't be read as its record (damaged, or written by an incompatible
version) is left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import counters, job_records, parts, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.flagged_reads import Flags, count_of, refusal, replies
from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient, queue_mget
from cogworker.adapters.replies import as_bytes
from cogworker.domain import memory, payload
from cogworker.domain.records import AttemptRecord, RunRecord
from cogworker.domain.stats import days_back

R = TypeVar("R", AttemptRecord, RunRecord)


def status(client: RedisClient, jid: str) -> str | None:
    """A tracked job's status, or None (not tracked, or expired)."""
    pipe = pipelines.pipeline(client)
    for queue in job_records.holders(client, jid):
        pipe.hget(keys.status(queue, jid), "status")
    return first_status(pipe.execute())


async def status_async(client: AsyncRedisClient, jid: str) -> str | None:
    """`status` through an asyncio client."""
    pipe = pipelines.pipeline_async(client)
    for queue in await job_records.holders_async(client, jid):
        pipe.hget(keys.status(queue, jid), "status")
    return first_status(await pipe.execute())


def first_status(found: Sequence[bytes | str | None]) -> str | None:
    """The status of the likeliest holder that has one (`job_records.holders`)."""
    value = next((value for value in found if value is not None), None)
    return None if value is None else as_bytes(value).decode()


def attempts(client: RedisClient, jid: str) -> list[AttemptRecord]:
    """A job's failed attempts, newest first (at most 25)."""
    return records_of(_job_list(client, jid, keys.job_attempts), AttemptRecord)


def history(client: RedisClient, jid: str) -> list[RunRecord]:
    """A job's runs, newest first."""
    return records_of(_job_list(client, jid, keys.history), RunRecord)


def _job_list(client: RedisClient, jid: str, named: Callable[[str, str], str]) -> list[Any]:
    """The entries of one of `jid`'s lists (`named(queue, jid)`) in each slot that may hold
    it: the likeliest's first, then those the layout before kept (older)."""
    pipe = pipelines.pipeline(client)
    for queue in job_records.holders(client, jid):
        pipe.lrange(named(queue, jid), 0, -1)
    return [entry for found in pipe.execute() for entry in found]


def class_history(client: RedisClient, class_name: str, limit: int = 100) -> list[RunRecord]:
    """The latest runs of a job class on any queue, newest first (at most `limit`).

    Each queue keeps its share in its slot, latest settled first: after the parts'
    `SMEMBERS`, one round trip of an `LRANGE` per queue (its latest `limit`), then the
    runs ordered by when they ended.
    """
    queues = parts.queues(client.smembers(keys.PARTS))
    pipe = pipelines.pipeline(client)
    for queue in queues:
        pipe.lrange(keys.class_history(queue, class_name), 0, limit - 1)
    runs = [run for found in pipe.execute() for run in records_of(found, RunRecord)]
    return sorted(runs, key=lambda run: run.ended_at, reverse=True)[:limit]


def running_work(
    client: RedisClient, identities: Sequence[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per process, what each of its threads runs now (as its last heartbeat said; nothing
    for a process whose key isn't a hash)."""
    pipe = pipelines.pipeline(client)
    for identity in identities:
        pipe.hgetall(keys.workers(identity))
    return {
        identity: {
            as_bytes(thread).decode(): work
            for thread, raw in (table.items() if isinstance(table, dict) else ())
            if (work := _record(raw)) is not None
        }
        for identity, table in zip(identities, replies(pipe), strict=True)
    }


def memory_series(
    client: RedisClient, identities: Sequence[str], now: float
) -> dict[str, tuple[memory.Sample, ...]]:
    """Per process, its 96 fifteen-minute RSS slots, oldest first, in one pipelined read (all
    empty for a process whose key isn't a sorted set)."""
    first = memory.first_slot(now)
    pipe = pipelines.pipeline(client)
    for identity in identities:
        pipe.zrangebyscore(keys.memory_history(identity), first, "+inf")
    return {
        identity: memory.series(members if isinstance(members, list) else [], now)
        for identity, members in zip(identities, replies(pipe), strict=True)
    }


@attrs.frozen(kw_only=True)
class QueueLoad:
    """A queue's size and latency (seconds its oldest job has waited; 0 when empty); None
    when its key can't be read as a queue, and `problem` says why."""

    name: str
    size: int | None
    latency: float | None
    problem: str | None = None
    #: Whether workers are told not to take its jobs (`Client.pause`).
    paused: bool = False
    #: Its jobs' runs counted on it (since layout step 3: the counters before are
    #: everyone's, `adapters.counters`), and the failed ones; None: not a count.
    processed: int | None = 0
    failed: int | None = 0


def queues(client: RedisClient, now: float) -> list[QueueLoad]:
    """Every known queue (registered or paused) with its size, latency, pause and counters,
    by name (a name that isn't UTF-8 is listed escaped, with its problem).  A name in the
    pause index whose flag is gone (`adapters/queue_pause.py`) is neither paused nor,
    unregistered, listed."""
    pipe = pipelines.pipeline(client)
    pipe.smembers(keys.QUEUES)
    pipe.smembers(keys.PAUSED)
    registered_set, listed_set = pipe.execute()
    registered = {as_bytes(name) for name in registered_set}
    known = sorted(registered | {as_bytes(name) for name in listed_set})
    names = [name.decode() for name in known if _is_utf8(name)]
    pipe = pipelines.pipeline(client)
    for name in names:
        pipe.llen(keys.queue(name))
        pipe.lindex(keys.queue(name), -1)
        pipe.exists(keys.queue_paused(name))
        queue_mget(pipe, [keys.stat(name, "processed"), keys.stat(name, "failed")])
    found = replies(pipe)
    loads = [
        attrs.evolve(
            _load(name, size, oldest, now), paused=bool(flag), processed=ran, failed=failed
        )
        for name, size, oldest, flag, (ran, failed) in zip(
            names, found[::4], found[1::4], found[2::4], map(_counted, found[3::4]), strict=True
        )
        if flag or name.encode() in registered
    ]
    unreadable = [
        QueueLoad(name=name.decode("utf-8", "backslashreplace"), size=None, latency=None,
                  problem="its name isn't UTF-8 text, which cogworker never writes")
        for name in sorted(registered)
        if not _is_utf8(name)
    ]  # fmt: skip
    return sorted([*loads, *unreadable], key=lambda load: load.name)


def _counted(reply: object) -> tuple[int | None, int | None]:
    """A queue's processed and failed counters from their MGET (None: not a count)."""
    processed, failed = reply if isinstance(reply, list) else (reply, reply)
    return count_of(processed), count_of(failed)


def _is_utf8(name: bytes) -> bool:
    try:
        name.decode()
    except UnicodeDecodeError:
        return False
    return True


def _load(name: str, size: object, oldest: object, now: float) -> QueueLoad:
    problem = refusal(keys.queue(name), size, "list")
    if problem is not None or not isinstance(size, int):
        return QueueLoad(name=name, size=None, latency=None, problem=problem)
    return QueueLoad(name=name, size=size, latency=_waited(cast("bytes | None", oldest), now))


def daily_counts(client: RedisClient, name: str, now: float, days: int) -> dict[str, int | None]:
    """A counter (`processed`, `failed`) for each of the last `days` UTC days, summed over
    queues (None: a queue's counter of the day holds something else than a count)."""
    dates = days_back(now, days)
    values = counters.read(client, [(name, day) for day in dates], Flags())
    return dict(zip(dates, values, strict=True))


def totals(client: RedisClient) -> dict[str, int | None]:
    """The processed and failed counters since the beginning, summed over queues (None:
    a queue's counter is not a count)."""
    processed, failed = counters.read(client, [("processed", None), ("failed", None)], Flags())
    return {"processed": processed, "failed": failed}


def _waited(oldest: bytes | None, now: float) -> float:
    if oldest is None:
        return 0.0
    decoded = payload.decode(oldest)
    if not is_successful(decoded):
        return 0.0
    job = decoded.unwrap()
    return max(0.0, now - (job.enqueued_at or job.created_at))


def records_of(raw: list[Any], kind: type[R]) -> list[R]:
    # Imported here: the converter (cattrs) is for these cold reads, never a worker's run.
    from cogworker.adapters.codec import structured

    return [record for item in raw if (record := structured(item, kind)) is not None]


def _record(raw: bytes | str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
