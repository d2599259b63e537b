"""What the periodic manager logs of each tick it handles: enqueued, skipped (and why),
missed ticks dropped, a run stopped by a client middleware.

A tick is skipped while its previous run holds the running lock, which is
taken at the enqueue: the run may still wait in its queue.  The log says it
runs only when a worker has taken it (`PeriodicStore.taken_by_a_worker`),
read only for a skipped tick, off the job path.
"""

from __future__ import annotations

import datetime as dt
import logging

import attrs

from cogworker.adapters.periodic_store import ClaimResult, PeriodicStore
from cogworker.app.config import Config
from cogworker.domain.cron import DROP, Due, ScheduleEntry

#: Why a tick was skipped when a duplicate holds the run's unique lock.
_DUPLICATE = "a job with the same unique lock is queued or running"


@attrs.frozen
class ClaimLog:
    """A handled tick: how its claim went, its entry and tick, and the run's jid."""

    result: ClaimResult
    entry: ScheduleEntry
    due: Due
    jid: str | None


def log_claim(logger: logging.Logger, config: Config, store: PeriodicStore, log: ClaimLog) -> None:
    """Log how a tick was handled (nothing for a tick another process handled)."""
    entry, due, result = log.entry, log.due, log.result
    extra = {"jid": log.jid or "", "class": entry.class_name, "reason": due.action}
    when = _when(due.at)
    if result == "enqueued":
        logger.info("periodic job %s enqueued for %s", entry.name, when, extra=extra)
    elif result in ("skipped", "duplicate"):
        why = _previous_run(store, entry) if result == "skipped" else _DUPLICATE
        logger.info("periodic job %s: %s skipped, %s", entry.name, when, why, extra=extra)
    elif result == "dropped" and due.action == DROP:
        logger.info(
            "periodic job %s: missed ticks up to %s dropped (periodic_catch_up=%s)",
            entry.name,
            when,
            config.periodic_catch_up,
            extra=extra,
        )
    elif result == "dropped":
        logger.info(
            "periodic job %s: %s stopped by a client middleware", entry.name, when, extra=extra
        )


def _previous_run(store: PeriodicStore, entry: ScheduleEntry) -> str:
    """Why a tick was skipped: its previous run still runs, or is still queued."""
    holder = store.running(entry.queue, entry.name)
    if holder is None:  # let go of since the tick was skipped
        return "its previous run had not finished"
    if store.taken_by_a_worker(entry.queue, holder):
        return "its previous run still runs"
    return f"its previous run {holder} is still queued"


def _when(at: float) -> str:
    """A tick for the log: UTC, to the second."""
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
