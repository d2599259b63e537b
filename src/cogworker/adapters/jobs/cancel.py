"""Cancel: where a jid is now (waiting, held by a process, finished), and taking a waiting
one off in one script (see cancel.lua).

Nothing indexes jobs by jid, so each place is searched: every registered
queue's next `QUEUE_SEARCH_DEPTH` jobs and each process's in-progress list
(an LRANGE of `FIND_CHUNK` entries per call, sieved for the jid), and every queue's scheduled and
retry sets (those of `cogworker:parts`, `adapters.parts`) by
`ZSCAN MATCH` on the jid, `ZSCAN_COUNT` entries per call.  Each hit is decoded and its jid
compared.

A scan, not the dashboard's walk by rank: entries leave the sets while it
runs (the pollers move due ones out), which shifts every rank after them,
so a walk by rank can pass over a waiting job; `ZSCAN` returns every entry
present from its start to its end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, cast

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import jid_index, job_records, parts, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_events import job_event_target
from cogworker.adapters.dashboard_queues import search_list
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import DAY_COUNTER_TTL, Retention
from cogworker.adapters.jobs.run_marks import MarkStore
from cogworker.adapters.process_registry import ProcessRegistry, cancel_signal
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.results import queue_indexes, result_args, result_key
from cogworker.adapters.scripts import LuaScript, run_pipeline
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from cogworker.domain.stats import day_of
from cogworker.domain.status import status_of

CANCEL = LuaScript("cancel")
#: Entries one `ZSCAN` looks at (redis-py's default is 10: 10,000 round trips for 100,000
#: retries); the pattern is matched server-side, so only the job's entry comes back.
ZSCAN_COUNT = 1_000


@attrs.frozen(kw_only=True)
class Waiting:
    """A job found waiting: the key it waits in, of which kind, its entry and its record."""

    key: str
    kind: Literal["list", "zset"]
    entry: bytes
    job: JobRecord


@attrs.define
class CancelStore:
    """Cancels on one Redis."""

    client: RedisClient
    retention: Retention = attrs.field(factory=Retention)

    def waiting(self, jid: str) -> Waiting | None:
        """Where `jid` waits to run (a queue, scheduled, retry), if it does."""
        for name in sorted(as_bytes(q).decode() for q in self.client.smembers(keys.QUEUES)):
            found = self._in_list(keys.queue(name), jid)
            if found is not None:
                return Waiting(key=keys.queue(name), kind="list", entry=found[0], job=found[1])
        registered = cast("set[bytes]", self.client.smembers(keys.PARTS))
        sets = [
            key(queue) for queue in parts.queues(registered) for key in (keys.schedule, keys.retry)
        ]
        for sorted_set in sets:
            for entry, _ in self.client.zscan_iter(
                sorted_set, match=f"*{_glob(jid)}*", count=ZSCAN_COUNT
            ):
                job = _job_of(as_bytes(entry), jid)
                if job is not None:
                    return Waiting(key=sorted_set, kind="zset", entry=as_bytes(entry), job=job)
        return None

    def holder(self, jid: str) -> tuple[str, str] | None:
        """The process holding `jid` (fetched, running or about to), if one does, and the
        queue it was fetched from."""
        registry = ProcessRegistry(self.client)
        for identity in registry.identities():
            for queue in sorted(registry.fetched_from(identity)):
                if self._in_list(keys.in_progress(queue, identity), jid) is not None:
                    return identity, queue
        return None

    def signal(self, identity: str, queue: str, jid: str) -> None:
        """Tell `identity` to cancel its run of `jid` (a job of `queue`) at its next
        heartbeat; the cancel stays with the run, should that process die first (its
        recovery ends the run as cancelled, `run_marks`)."""
        MarkStore(self.client).mark_cancelled(queue, jid)
        ProcessRegistry(self.client).send(identity, cancel_signal(jid))

    def finished(self, jid: str) -> bool:
        """Whether `jid` is known to have ended: a final status, or an attempt on record
        (in each slot that may hold its records, `job_records.holders`)."""
        pipe = pipelines.pipeline(self.client)
        for queue in job_records.holders(self.client, jid):
            pipe.hget(keys.status(queue, jid), "status")
            pipe.exists(keys.job_attempts(queue, jid), keys.history(queue, jid))
        found = pipe.execute()
        return any(map(_ended, found[::2])) or any(found[1::2])

    def remove(self, waiting: Waiting, outcome: OutcomeRecord, now: float) -> bool:
        """End a waiting job as `outcome` (a cancel); False if it no longer waited there."""
        kept, queue = self.retention, waiting.job.queue
        events, event = job_event_target(waiting.job, "cancel")
        cancel_keys = (
            waiting.key, keys.stat(queue, "cancelled"), keys.stat(queue, "cancelled", day_of(now)),
            keys.job_attempts(queue, outcome.jid), keys.status(queue, outcome.jid),
            outcome.unique_lock or keys.no_lock(queue), outcome.running_lock or keys.no_lock(queue),
            events, result_key(outcome.jid, outcome.result, queue), keys.located(queue),
        )  # fmt: skip
        cancel_args = (
            waiting.kind, waiting.entry, outcome.jid, DAY_COUNTER_TTL,
            outcome.attempt, kept.attempts_kept, int(kept.attempts_ttl),
            outcome.status, int(kept.status_ttl), now, event, *result_args(outcome.result),
        )  # fmt: skip
        # The queue's part registered first: a reader never misses the counter it writes.
        pipe = pipelines.pipeline(self.client)
        pipe.sadd(keys.PARTS, queue)
        queue_indexes(pipe, [(outcome.jid, outcome.result)])
        jid_index.queue_indexes(pipe, [job_records.settled_index(outcome, queue, kept)])
        CANCEL.queue(pipe, cancel_keys, cancel_args)
        return bool(run_pipeline(self.client, pipe)[-1])

    def _in_list(self, key: str, jid: str) -> tuple[bytes, JobRecord] | None:
        for found in search_list(self.client, key, jid):
            matching = _matching(found, jid)
            if matching is not None:
                return matching
        return None


def _ended(status: bytes | str | None) -> bool:
    """Whether a tracked status read says the job ended (not missing, not "queued")."""
    return status is not None and status_of(as_bytes(status).decode()) not in (None, "queued")


def _matching(found: Iterable[bytes | str], jid: str) -> tuple[bytes, JobRecord] | None:
    for raw in found:
        entry = as_bytes(raw)
        job = _job_of(entry, jid)
        if job is not None:
            return entry, job
    return None


def _job_of(entry: bytes, jid: str) -> JobRecord | None:
    decoded = payload.decode(entry)
    if is_successful(decoded) and decoded.unwrap().jid == jid:
        return decoded.unwrap()
    return None


def _glob(text: str) -> str:
    """`text` as a literal in a Redis MATCH pattern."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)
