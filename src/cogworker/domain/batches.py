"""Batches: when a batch is complete, when it succeeded, which callbacks are due.

A batch is a set of jobs (its members) with up to two callbacks:
`on_complete`, due once every member reached a final outcome (success,
dead, discarded, cancelled, expired; a retry isn't one), and `on_success`,
due once every member succeeded.  Neither is due before the batch is
closed (its members are then all known).

Every decision here is monotone: the counts only grow (each member's first
final outcome counts, once) and a closed batch stays closed, so a callback
once due stays due.  That is what lets a decision made from any snapshot
taken after an event was folded be acted on, again and again, by whoever
folds it: firing is idempotent (see `adapters/batch_store.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

import attrs

#: A member's final outcome, as the settling scripts name it in the event they append.
Final: TypeAlias = Literal["ack", "dead", "discard", "cancel", "expire"]
FINALS: tuple[Final, ...] = ("ack", "dead", "discard", "cancel", "expire")
#: Which callback: on every member's final outcome, or on every member's success.
Callback: TypeAlias = Literal["complete", "success"]
CALLBACKS: tuple[Callback, ...] = ("success", "complete")
#: The event that closes a batch (its member count then taken), beside members' finals.
CLOSE = "close"


@attrs.frozen(kw_only=True)
class BatchStatus:
    """A batch's state as its slot holds it: members, finals by outcome, what fired
    (what `Client.batch_status` returns)."""

    bid: str = ""
    #: When it was opened (unix time).
    created_at: float = 0.0
    #: Members registered so far (all of them once closed).
    total: int = 0
    closed: bool = False
    #: Members settled, by final outcome (each member counted once, at its first final).
    finals: Mapping[Final, int] = attrs.field(factory=dict)
    #: The callbacks the batch has (given at its opening).
    callbacks: frozenset[Callback] = frozenset()
    #: The callbacks already pushed onto their queues.
    fired: frozenset[Callback] = frozenset()

    @classmethod
    def from_fields(cls, bid: str, fields: Mapping[str, str]) -> BatchStatus:
        """The status a batch's hash holds (fields as `adapters/batch_store.py` writes
        them: created_at, closed, total, f:OUTCOME, cb:CALLBACK, fired:CALLBACK)."""
        return cls(
            bid=bid,
            created_at=float(fields.get("created_at", 0) or 0),
            total=int(fields.get("total", 0) or 0),
            closed=fields.get("closed") == "1",
            finals={f: int(fields[f"f:{f}"]) for f in FINALS if f"f:{f}" in fields},
            callbacks=frozenset(c for c in CALLBACKS if f"cb:{c}" in fields),
            fired=frozenset(c for c in CALLBACKS if fields.get(f"fired:{c}") == "1"),
        )

    @property
    def settled(self) -> int:
        """Members that reached a final outcome."""
        return sum(self.finals.values())

    @property
    def pending(self) -> int:
        """Members still to reach one (retries included); 0 if more settled than counted."""
        return max(self.total - self.settled, 0)

    @property
    def succeeded(self) -> int:
        """Members that succeeded."""
        return self.finals.get("ack", 0)

    @property
    def failed(self) -> int:
        """Members that ended any other way (dead, discarded, cancelled, expired)."""
        return self.settled - self.succeeded

    def with_fired(self, callback: Callback) -> BatchStatus:
        """This status once `callback` was pushed."""
        return attrs.evolve(self, fired=self.fired | {callback})

    @property
    def complete(self) -> bool:
        """Whether every member of the closed batch reached a final outcome."""
        return is_complete(self)

    @property
    def success(self) -> bool:
        """Whether every member of the closed batch succeeded."""
        return is_success(self)


def is_complete(status: BatchStatus) -> bool:
    """Whether every member of a closed batch reached a final outcome."""
    return status.closed and status.settled >= status.total


def is_success(status: BatchStatus) -> bool:
    """Whether every member of a closed batch succeeded."""
    return is_complete(status) and status.failed == 0


def due_callbacks(status: BatchStatus) -> tuple[Callback, ...]:
    """The batch's callbacks due now and not yet fired, `success` first."""
    due = {"complete": is_complete(status), "success": is_success(status)}
    return tuple(c for c in CALLBACKS if c in status.callbacks and due[c] and c not in status.fired)


def is_finished(status: BatchStatus) -> bool:
    """Whether nothing is left to happen: complete, and every due callback fired.

    (A batch that completed unsuccessfully never fires `on_success`.)"""
    return is_complete(status) and not due_callbacks(status)


def status_word(status: BatchStatus) -> str:
    """One word for the batch's state: open, running, succeeded or complete."""
    if not status.closed:
        return "open"
    if not is_complete(status):
        return "running"
    return "succeeded" if is_success(status) else "complete"


def callback_jid(bid: str, callback: Callback) -> str:
    """The jid of a batch's callback run: fixed by the batch, so a push repeated after a
    crash is recognized as the same push."""
    return f"{bid}-{callback}"


def event(bid: str, jid: str, final: Final | Literal["close"]) -> str:
    """The event a settlement (or the closing) appends to its queue's batch events."""
    return f"{bid} {jid} {final}"


@attrs.frozen(kw_only=True)
class BatchEvent:
    """An event read back: the batch, the member (empty for a close), what happened."""

    bid: str
    jid: str
    final: Final | Literal["close"]


def parse_event(text: str) -> BatchEvent | None:
    """An event's text as a record; None for text that isn't one (written by hand)."""
    parts = text.split(" ")
    if len(parts) != 3 or not parts[0]:
        return None
    bid, jid, final = parts
    if final == CLOSE:
        return BatchEvent(bid=bid, jid=jid, final="close")
    for known in FINALS:
        if final == known:
            return BatchEvent(bid=bid, jid=jid, final=known)
    return None
