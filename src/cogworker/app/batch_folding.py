"""Folding batch events: each member's final outcome (and each closing) into its batch,
and the callbacks that became due pushed, once.

For one event: fold it (idempotent), ask `domain.batches` what is due, push each
due callback (a repeated push writes nothing), note it, and only then remove the
event.  A crash anywhere leaves the event to be folded again by any process:
the decision is monotone (once due, due for good), so the next fold decides the
same and the pushes already made are recognized.  Workers fold the events of
their queues (`app/worker/batch_mover.py`); a client folds the closing it just
appended, so a batch whose members all ended before it closed fires at once.
"""

from __future__ import annotations

from collections.abc import Callable

from returns.pipeline import is_successful

from cogworker.adapters.batch_store import BatchStore, Folded
from cogworker.domain import batches, payload

#: Events read per round trip.
EVENTS_PER_READ = 100


def fold_queue(store: BatchStore, queue: str, now: Callable[[], float]) -> int:
    """Fold every event waiting on `queue`'s list; how many were folded."""
    folded = 0
    while True:
        events = store.events(queue, EVENTS_PER_READ)
        for raw in events:
            fold_event(store, raw, now())
            store.done(queue, raw)
        folded += len(events)
        if len(events) < EVENTS_PER_READ:
            return folded


def fold_event(store: BatchStore, raw: bytes, now: float) -> None:
    """Fold one event and push what it made due (see the module's docstring)."""
    event = batches.parse_event(raw.decode("utf-8", "replace"))
    if event is None:
        return  # not an event: written by hand; removed like any folded one
    folded = store.fold(event)
    if folded is None:
        return  # its batch expired (or never was)
    status = folded.status
    due = batches.due_callbacks(status)
    for callback in due:
        _fire(store, folded, callback, now)
        status = status.with_fired(callback)
        store.mark(event.bid, callback, finished=batches.is_finished(status))
    if not due and batches.is_finished(status):
        store.mark(event.bid, None, finished=True)


def _fire(store: BatchStore, folded: Folded, callback: batches.Callback, now: float) -> None:
    decoded = payload.decode(folded.payloads[callback])
    if not is_successful(decoded):
        return  # written at opening from a record: only a hand-edited hash gets here
    job = decoded.unwrap()
    store.fire(job.queue, job.jid, payload.encode(job, enqueued_at=now))
