"""Removing entries for good from the dashboard: one script for a sorted set or a queue.

`lua/dashboard_remove.lua` takes the entries off and, for each one it
removed, lets go of the locks its job held (owner-checked), in the same
step: a job removed for good must not keep blocking its duplicates, and a job
keeping its result stores how it ended (killed or discarded) for its waiter.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_events import entry_event_target
from cogworker.adapters.jobs.outcome import OutcomeKind
from cogworker.adapters.periodic_store import PeriodicStore
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.results import queue_indexes, removed_result, result_args, result_key
from cogworker.adapters.scripts import LuaScript, run_pipeline
from cogworker.domain.results import Kept

REMOVE = LuaScript("dashboard_remove")


@attrs.frozen(kw_only=True)
class Removal:
    """An entry to take away, and the locks its job may hold (released only if they name `jid`)."""

    entry: bytes
    jid: str = ""
    unique_lock: str = ""
    running_lock: str = ""
    #: The job's queue: the slot of the placeholders standing for locks it doesn't hold.
    queue: str = ""


def remove(
    client: RedisClient,
    where: tuple[str, str],
    head: Sequence[str | float | int],
    removals: Sequence[Removal],
) -> list[bool]:
    """Run `dashboard_remove` on `removals` (see its header): True where this call removed one.
    A job keeping its result has its jid index written first, in the same round trip."""
    if not removals and head[0] == "zset":
        return []
    per_entry_keys: list[str] = []
    entries: list[bytes | str | int] = []
    final: OutcomeKind = "dead" if head[1] == "kill" else "discard"
    kept: list[tuple[str, Kept | None]] = []
    for removal in removals:
        events, event = entry_event_target(removal.entry, final, removal.queue)
        jid, result = removed_result(removal.entry, "killed" if final == "dead" else "discarded")
        kept.append((jid, result))
        per_entry_keys += [
            removal.unique_lock or keys.no_lock(removal.queue),
            removal.running_lock or keys.no_lock(removal.queue),
            events, result_key(jid, result, removal.queue),
        ]  # fmt: skip
        entries += [removal.entry, removal.jid, event, *result_args(result)]
    # A sorted set's jid index of the sets; a list's removal has none (an unused name).
    located = keys.located_of(where[0]) if head[0] == "zset" else where[1]
    remove_keys = (*where, located, *per_entry_keys)
    if not any(result for _, result in kept):
        replies = REMOVE(client, remove_keys, (*head, *entries))
    else:
        pipe = pipelines.pipeline(client)
        queue_indexes(pipe, kept)
        REMOVE.queue(pipe, remove_keys, (*head, *entries))
        replies = run_pipeline(client, pipe)[-1]
    return [bool(reply) for reply in replies]


def remove_periodic(client: RedisClient, name: str) -> bool:
    """Take the periodic job `name` off the stored schedule (`PeriodicStore.remove`): whether
    it was there."""
    return bool(PeriodicStore(client).remove([name]))
