"""The dashboard's read of a job's kept result (docs/results.md): by jid, without waiting."""

from __future__ import annotations

import redis

from cogworker.adapters import jid_index
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.results import probe
from cogworker.domain import results


def kept_result(client: redis.Redis, jid: str) -> results.Stored | None:
    """The result `jid` keeps now, if it keeps one: its value, or how it ended."""
    queue = jid_index.locate(client, jid, probe(jid), result=True)
    record = None if queue is None else client.lindex(keys.result(queue, jid), 0)
    return None if record is None else results.parse_record(record)
