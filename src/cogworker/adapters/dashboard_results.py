"""The dashboard's reads of a job's kept result (docs/results.md) and own records, by jid,
without waiting."""

from __future__ import annotations

import attrs

from cogworker.adapters import jid_index, job_records, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.results import probe
from cogworker.adapters.tracking import first_status, records_of
from cogworker.domain import results
from cogworker.domain.records import AttemptRecord


def kept_result(client: RedisClient, jid: str) -> results.Stored | None:
    """The result `jid` keeps now, if it keeps one: its value, or how it ended."""
    found = jid_index.locate(client, jid, probe(jid), result=True)
    record = None if found is None else client.lindex(keys.result(found.queue, jid), 0)
    return None if record is None else results.parse_record(record)


@attrs.frozen(kw_only=True)
class JobRecords:
    """What the job page shows of a jid's own records: its tracked status, its failed
    attempts (newest first, unreadable ones left out) and its kept result."""

    status: str | None
    attempts: list[AttemptRecord]
    result: results.Stored | None


def job_page_records(client: RedisClient, jid: str) -> JobRecords:
    """`jid`'s status, attempts and result with one look-up of its queue (the jid index,
    else one probe over the queues for any of them), then one pipeline: a job page's few
    commands, whatever the queues hold."""
    holder = jid_index.locate(client, jid, lambda queue: (*job_records.probe(jid)(queue),
                                                          keys.result(queue, jid)))  # fmt: skip
    queues = job_records.holders_of(holder)
    pipe = pipelines.pipeline(client)
    for queue in queues:
        pipe.hget(keys.status(queue, jid), "status")
        pipe.lrange(keys.job_attempts(queue, jid), 0, -1)
    pipe.lindex(keys.result(queues[0], jid), 0)
    *found, record = pipe.execute()
    return JobRecords(
        status=first_status(found[::2]),
        attempts=records_of([entry for entries in found[1::2] for entry in entries], AttemptRecord),
        result=None if record is None else results.parse_record(record),
    )
