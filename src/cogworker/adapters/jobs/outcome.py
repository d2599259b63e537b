"""A settlement as `settle.lua` takes it: the typed decision, written out as text.

This is the one place a `domain.settlement.Settlement` becomes strings; the
same record is what a stopping process hands over (see `handover`), so it
stays the same shape until the script has written it.
"""

from __future__ import annotations

from typing import Literal, assert_never

import attrs

from cogworker.domain import payload, records
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.locks import Extend, LockEffect, Release
from cogworker.domain.results import Kept
from cogworker.domain.settlement import (
    Ack,
    Cancelled,
    Discarded,
    Effects,
    Expired,
    Settlement,
    ToDead,
    ToRetry,
)

OutcomeKind = Literal["ack", "retry", "dead", "discard", "cancel", "expire"]
LockAction = Literal["release", "extend", ""]


@attrs.frozen(kw_only=True)
class OutcomeRecord:
    """What settle.lua writes, field by field ("" where there is nothing to write)."""

    kind: OutcomeKind
    jid: str
    class_name: str = ""
    #: When to retry it, or when it died.
    score: float = 0.0
    #: The entry filed in retry or dead.
    payload: str = ""
    #: JSON records for the attempts log and the run history.
    attempt: str = ""
    history: str = ""
    #: Whether the run goes into the job's own history too (else only its class's).
    history_per_job: bool = True
    #: The job's new status, when its status is tracked.
    status: str = ""
    #: Its unique lock, what to do with it, and the TTL an "extend" gives it.
    unique_lock: str = ""
    unique_action: LockAction = ""
    lock_ttl: float = 0.0
    #: Its periodic running lock, when this settlement lets go of it.
    running_lock: str = ""
    #: What the run adds to its class's metrics; None: nothing (not a run, or not kept).
    sample: RunSample | None = None
    #: The holders key of the per-key limit place the run held, which this settlement
    #: lets go of ("" for none: see `app/worker/limit_gate.py`).
    limit_place: str = ""
    #: The batch the job is a member of ("" for none) and its queue: where a final outcome
    #: appends the batch's event (set by `adapters.batch_events.with_batch`), and where a
    #: handed-over outcome is counted and kept in its class's history (set by `hand_over`;
    #: "" in a record an older release handed over: the migrated part, `adapters.parts`).
    bid: str = ""
    queue: str = ""
    #: The job's kept result and its jid index (`domain.results`); None: it keeps none.
    result: Kept | None = None

    @property
    def is_plain_ack(self) -> bool:
        """A success ack_many.lua writes: any but one letting go of a periodic job's running
        lock or appending a batch member's event (those are `settle`'s)."""
        return (
            self.kind == "ack"
            and not (self.running_lock or self.bid)
            and self.unique_action != "extend"
        )

    @property
    def is_plain_retry(self) -> bool:
        """A retry with no status, lock or result to write (see retry_many.lua)."""
        return self.kind == "retry" and not (
            self.status or self.unique_lock or self.running_lock or self.result is not None
        )


def outcome_record(settlement: Settlement, limit_place: str = "") -> OutcomeRecord:
    """`settlement` as settle.lua takes it, letting go of the run's `limit_place` if any."""
    match settlement:
        case Ack(jid=jid, class_name=class_name, effects=effects):
            return _record("ack", jid, class_name, 0.0, "", effects, limit_place)
        case ToRetry(job=job, at=at, effects=effects):
            return _record(
                "retry", job.jid, job.class_name, at, payload.encode(job), effects, limit_place
            )
        case ToDead(job=job, at=at, effects=effects):
            return _record(
                "dead", job.jid, job.class_name, at, payload.encode(job), effects, limit_place
            )
        case Discarded(job=job, effects=effects):
            return _record("discard", job.jid, job.class_name, 0.0, "", effects, limit_place)
        case Cancelled(job=job, effects=effects):
            return _record("cancel", job.jid, job.class_name, 0.0, "", effects, limit_place)
        case Expired(job=job, effects=effects):
            return _record("expire", job.jid, job.class_name, 0.0, "", effects, limit_place)
        case _:
            assert_never(settlement)


def _record(
    kind: OutcomeKind,
    jid: str,
    class_name: str,
    score: float,
    filed: str,
    effects: Effects,
    limit_place: str,
) -> OutcomeRecord:
    action, ttl = _lock_action(effects.unique_lock)
    return OutcomeRecord(
        kind=kind,
        jid=jid,
        class_name=class_name,
        score=score,
        payload=filed,
        attempt="" if effects.attempt is None else records.to_json(effects.attempt),
        history="" if effects.history is None else records.to_json(effects.history),
        history_per_job=effects.history_per_job,
        status=effects.status or "",
        unique_lock=effects.unique_lock.key if effects.unique_lock else "",
        unique_action=action,
        lock_ttl=ttl,
        running_lock=effects.running_lock.key if effects.running_lock else "",
        sample=effects.sample,
        result=effects.result,
        limit_place=limit_place,
    )


def _lock_action(effect: LockEffect | None) -> tuple[LockAction, float]:
    if effect is None:
        return "", 0.0
    match effect.change:
        case Release():
            return "release", 0.0
        case Extend(ttl=ttl):
            return "extend", ttl
        case _:
            assert_never(effect.change)
