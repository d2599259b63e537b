"""A periodic job's runs: built from its stored entry, pushed through the client middleware.

One path for the periodic manager's ticks and the dashboard's "Enqueue now".
A run carries its job class's options (its unique lock, status tracking), as
a client enqueue does: they are worked out when the schedule is stored
(`scheduled_entry`), so the dashboard needs no import of the job's class.
The run passes through `Config.client_middleware`, then one script
(`lua/periodic_tick.lua`, through `PeriodicStore.claim`) pushes it only if
the job's running lock is free, and in the same step takes that lock and
the run's unique lock and marks a tracked run `queued`.

The running lock is taken for `queued_lock_ttl`: long enough to last while
the run waits in its queue (nobody renews it there); once a worker runs it,
its heartbeat renews it for `Config.periodic_lock_ttl`, so a run that dies
with its process lets go that long after the last beat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import (
    NOW,
    Claim,
    ClaimResult,
    PeriodicStore,
    decode_entry,
)
from cogworker.app.config import Config
from cogworker.app.job_record import build_job, new_jid
from cogworker.app.middleware import client_chain
from cogworker.app.periodic import Periodic
from cogworker.domain import payload, status, unique
from cogworker.domain.cron import DROP, ScheduleEntry
from cogworker.domain.job import JobRecord


def scheduled_entry(periodic: Periodic, config: Config, now: float) -> ScheduleEntry:
    """A configured periodic job as a new schedule entry, its class's options included."""
    options = build_job(periodic.job, periodic.args, now, lock_ttl=config.unique_lock_ttl).extra
    return attrs.evolve(periodic.entry(now), options=options)


def queued_lock_ttl(config: Config) -> float:
    """How long a running lock lasts from the enqueue until a worker's heartbeat renews it.

    A run may wait in its queue for long: as long as a unique job's lock
    lasts before it is judged lost (`unique_lock_ttl`), and never less
    than a running run's.
    """
    return max(config.periodic_lock_ttl, config.unique_lock_ttl)


def run_of(entry: ScheduleEntry, now: float, tick: float | None) -> JobRecord:
    """A run of `entry` (for `tick`, or None: enqueued by hand), with the keys the processor
    and heartbeat use."""
    extra: dict[str, str | float] = {
        "periodic": entry.name,
        "running_lock": keys.periodic_running(entry.queue, entry.name),
    }
    if tick is not None:
        extra["periodic_at"] = tick
    return entry.run(jid=new_jid(), now=now, extra=extra)


def push_run(
    store: PeriodicStore,
    config: Config,
    claim: Claim,
    job: JobRecord,
    ran: Callable[[str], str] | None = None,
) -> tuple[ClaimResult, str | None]:
    """Claim with `job` as the run, through the client middleware; how it went, and the jid.

    `ran(jid)` is the schedule entry to store if the run is enqueued (None
    for a claim that is no tick).  A middleware that stops the push leaves
    a tick handled with no run.
    """
    results: list[tuple[ClaimResult, str]] = []

    def push(final: JobRecord) -> str | None:
        result = store.claim(_with_run(claim, config, final, ran))
        results.append((result, final.jid))
        return final.jid if result == "enqueued" else None

    client_chain(config.client_middleware, push)(job)
    if results:
        return results[-1]
    if claim.action == NOW:
        return "dropped", None
    return store.claim(attrs.evolve(claim, action=DROP)), None


#: How enqueueing a periodic job's run by hand went: "enqueued"; "running": its previous run
#: is still queued or running; "unique": another job holds its unique lock; "stopped": a
#: client middleware stopped it; "unknown": the schedule has no such job (or can't read it).
RunNowOutcome = Literal["enqueued", "running", "unique", "stopped", "unknown"]
#: What a claim that is no tick can answer (the others are a tick's).
_OUTCOMES: dict[ClaimResult, RunNowOutcome] = {
    "enqueued": "enqueued",
    "skipped": "running",
    "duplicate": "unique",
    "dropped": "stopped",
}


@attrs.frozen(kw_only=True)
class RunNow:
    """How enqueueing a periodic job's run by hand went, and the run's jid if it was."""

    outcome: RunNowOutcome
    jid: str | None = None


def run_now(store: PeriodicStore, config: Config, name: str, now: float) -> RunNow:
    """Enqueue a run of the periodic job `name` now, outside its schedule (its ticks are
    unchanged), as a tick's run goes (see the module docstring)."""
    raw = store.schedule().get(name)
    entry = decode_entry(raw) if raw is not None else None
    if entry is None:
        return RunNow(outcome="unknown")
    claim = Claim(
        name=entry.name,
        at=now,
        action=NOW,
        expected=b"",
        if_enqueued="",
        otherwise="",
        lock_ttl=queued_lock_ttl(config),
        now=now,
    )
    result, jid = push_run(store, config, claim, run_of(entry, now, None))
    return RunNow(outcome=_OUTCOMES[result], jid=jid if result == "enqueued" else None)


def _with_run(
    claim: Claim, config: Config, job: JobRecord, ran: Callable[[str], str] | None
) -> Claim:
    """`claim` with `job` as its run: the payload, its locks (those the payload names, which
    the run's settlement lets go of) and its status's TTL."""
    mode = job.extra.get("unique")
    lock = job.extra.get("unique_lock")
    running = job.extra.get("running_lock")
    takes_lock = isinstance(lock, str) and unique.locks_at_enqueue(str(mode))
    tracked = status.is_tracked(job, config.track_status)
    return attrs.evolve(
        claim,
        if_enqueued=ran(job.jid) if ran is not None else "",
        queue=job.queue,
        payload=payload.encode(job),
        jid=job.jid,
        running_lock=running if isinstance(running, str) else "",
        unique_lock=lock if takes_lock and isinstance(lock, str) else "",
        unique_ttl=unique.ttl_of(job.extra, config.unique_lock_ttl),
        status_ttl=config.status_expiry if tracked else 0.0,
    )
