"""Removing jobs for good from the dashboard: the locks each lets go of, clearing a queue, and
the death handlers a kill runs.

A job deleted, killed or cleared from the dashboard lets go of its unique
lock and of a periodic run's running lock in the same script that removes
it (`DashboardStore`, owner-checked), so the next enqueue of the same job
isn't refused until the lock's TTL is up.  A kill runs the global death
handlers (`Config.death_handlers`), as Sidekiq's Web UI does, with a
`JobKilledError` saying it was killed by hand; the class's own
`retries_exhausted` doesn't run: its retries didn't run out, and the
dashboard may not be able to import the class.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import cast

import attrs
from returns.pipeline import is_successful

from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.adapters.dashboard_removal import Removal
from cogworker.app.config import Config
from cogworker.app.death import DeathNotice, notify
from cogworker.app.web.entries import JobView, is_plain_key, key_of
from cogworker.domain import locks, payload
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.exceptions import JobKilledError

#: Jobs a queue's clear takes off per script call (one round trip each).
CLEAR_BATCH = 500
LOGGER = logging.getLogger("cogworker.dashboard")


def removal(raw: bytes, job: JobRecord | None) -> Removal:
    """`raw` to remove, with the locks its decoded `job` may hold."""
    if job is None:
        return Removal(entry=raw)
    held = locks.held_locks(job)
    return Removal(
        entry=raw,
        jid=job.jid,
        unique_lock=held.unique_lock,
        running_lock=held.running_lock,
        queue=job.queue,
    )


def removals(views: Sequence[JobView]) -> list[Removal]:
    """The removals of entries of one queue's sorted set as the pages show them (their
    placeholders in that queue's slot, where the job's own are)."""
    return [attrs.evolve(removal(view.raw, view.job), queue=view.part) for view in views]


def _decoded_removal(raw: bytes, queue: str) -> Removal:
    """The removal of `raw` from `queue`'s list: its placeholders in that queue's slot, where
    the script's other keys are, even for an entry that isn't a job (no queue of its own)."""
    decoded = payload.decode(raw)
    found = removal(raw, decoded.unwrap() if is_successful(decoded) else None)
    return attrs.evolve(found, queue=queue)


def clear_queue(queues: QueueStore, queue: str) -> int:
    """Delete a queue's jobs, the next to run first, a batch per script; how many.

    Goes through as many jobs as the queue held when it started (jobs pushed
    meanwhile may stay), and unregisters the queue once it is empty.
    """
    deleted, size = 0, queues.size(queue)
    if size is None:  # not a list: nothing a queue's clear can take off it
        return 0
    for _ in range(size // CLEAR_BATCH + 2):
        entries = queues.tail(queue, CLEAR_BATCH)
        done = queues.delete(
            queue, [_decoded_removal(raw, queue) for raw in entries], clearing=True
        )
        deleted += sum(done)
        if not entries:
            break
    return deleted


def delete_queued(queues: QueueStore, queue: str, key: str) -> bool:
    """Delete the job a page names by `key` (its jid, or its entry's digest) from a queue,
    letting go of its locks; False if it is no longer there."""
    # A jid is looked for as text; for a digest every entry is a candidate.
    needle = key if is_plain_key(key) else ""
    for chunk in queues.search(queue, needle):
        found = [JobView.of(raw) for raw in chunk if key_of(raw) == key]
        if found:
            return queues.delete(queue, removals(found[:1]), clearing=False)[0]
    return False


def announce_kills(config: Config, views: Sequence[JobView], *, by: str = "the dashboard") -> None:
    """Run the death handlers for jobs just killed by hand from `by` (entries that aren't JSON
    objects are filed in dead all the same, without hooks)."""
    if not config.death_handlers:
        return
    for view in views:
        entry = _object(view.raw)
        if entry is not None:
            error = JobKilledError(f"job {view.key} was killed by hand from {by}")
            notice = DeathNotice(entry=entry, exception=error, job_class=None)
            notify(notice, config.death_handlers, LOGGER)


def _object(raw: bytes) -> dict[str, JSON] | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return cast("dict[str, JSON]", value) if isinstance(value, dict) else None
