"""Batch events: a batch member's final outcome, appended to its queue's events list by
the script that writes that outcome (settle, cancel, bury), so "the job ended" and "its
batch heard of it" can't come apart.  The batch's own state is in another slot
(`{b:BID}`): the mover (`adapters/batch_store.py`) folds the events into it.

A member carries its batch's id in its payload, as `bid`; what a settlement appends is
decided here from the payload as fetched (jobs of no batch cost a substring test).
"""

from __future__ import annotations

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.outcome import OutcomeKind, OutcomeRecord
from cogworker.domain import batches, payload
from cogworker.domain.job import JobRecord

#: The payload field naming a job's batch.
BID_FIELD = "bid"
_BID_TEXT = f'"{BID_FIELD}"'.encode()


def bid_of(job: JobRecord) -> str:
    """The batch `job` is a member of, or "" for none."""
    bid = job.extra.get(BID_FIELD)
    return bid if isinstance(bid, str) else ""


def with_batch(outcome: OutcomeRecord, raw: bytes) -> OutcomeRecord:
    """`outcome` naming the batch (and queue) of the job whose payload is `raw`, if any."""
    if outcome.bid or _BID_TEXT not in raw:
        return outcome
    decoded = payload.decode(raw)
    if not is_successful(decoded):
        return outcome
    job = decoded.unwrap()
    bid = bid_of(job)
    return attrs.evolve(outcome, bid=bid, queue=job.queue) if bid else outcome


def event_target(outcome: OutcomeRecord, queue: str) -> tuple[str, str]:
    """The events list a settlement of a job of `queue` appends to and the event ("" and
    a placeholder key in the queue's slot when there is none: no batch, or a retry, which
    isn't final)."""
    final = _final(outcome.kind)
    if not outcome.bid or final is None:
        return keys.no_lock(queue), ""
    return keys.batch_events(outcome.queue), batches.event(outcome.bid, outcome.jid, final)


def job_event_target(job: JobRecord, kind: OutcomeKind) -> tuple[str, str]:
    """`event_target` for a job ended outside a run (cancelled waiting, buried)."""
    record = OutcomeRecord(kind=kind, jid=job.jid, bid=bid_of(job), queue=job.queue)
    return event_target(record, job.queue)


def entry_event_target(raw: bytes, kind: OutcomeKind, queue: str) -> tuple[str, str]:
    """`event_target` for the job whose payload is `raw`, ended outside a run (buried);
    none for a payload that isn't a job's (the placeholder in `queue`'s slot)."""
    if _BID_TEXT not in raw:
        return keys.no_lock(queue), ""
    decoded = payload.decode(raw)
    if not is_successful(decoded):
        return keys.no_lock(queue), ""
    return job_event_target(decoded.unwrap(), kind)


def _final(kind: OutcomeKind) -> batches.Final | None:
    for final in batches.FINALS:
        if final == kind:
            return final
    return None
