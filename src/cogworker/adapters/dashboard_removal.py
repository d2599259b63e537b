"""Removing entries for good from the dashboard: one script for a sorted set or a queue.

`lua/dashboard_remove.lua` takes the entries off and, for each one it
removed, lets go of the locks its job held (owner-checked), in the same
step: a job removed for good must not keep blocking its duplicates.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_events import entry_event_target
from cogworker.adapters.jobs.outcome import OutcomeKind
from cogworker.adapters.scripts import LuaScript

REMOVE = LuaScript("dashboard_remove")


@attrs.frozen(kw_only=True)
class Removal:
    """An entry to take away, and the locks its job may hold (released only if they name `jid`)."""

    entry: bytes
    jid: str = ""
    unique_lock: str = ""
    running_lock: str = ""


def remove(
    client: redis.Redis,
    where: tuple[str, str],
    head: Sequence[str | float | int],
    removals: Sequence[Removal],
) -> list[bool]:
    """Run `dashboard_remove` on `removals` (see its header): True where this call removed one."""
    if not removals and head[0] == "zset":
        return []
    locks: list[str] = []
    entries: list[bytes | str] = []
    final: OutcomeKind = "dead" if head[1] == "kill" else "discard"
    for removal in removals:
        events, event = entry_event_target(removal.entry, final)
        locks += [removal.unique_lock or keys.NO_LOCK, removal.running_lock or keys.NO_LOCK, events]
        entries += [removal.entry, removal.jid, event]
    replies = REMOVE(client, (*where, *locks), (*head, *entries))
    return [bool(reply) for reply in replies]
