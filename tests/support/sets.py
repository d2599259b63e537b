"""Entries written by hand into a queue's scheduled, retry or dead set, as the engine's
writers leave them: the queue registered in `cogworker:parts` first (merged reads go over
the parts, `adapters.parts`), then the entries, each that names a jid noted in its queue's
jid index of the sets (`adapters.located`)."""

from __future__ import annotations

from collections.abc import Mapping

import redis

from cogworker.adapters import located
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_index import jid_of


def part_of(key: str) -> str:
    """The queue whose sorted set `key` is (`redis_keys.sorted_set`'s name)."""
    return key[len(keys.QUEUE_HEAD) : key.rindex("}:")]


def add_to_set(
    rc: redis.Redis | redis.client.Pipeline, key: str, entries: Mapping[str | bytes, float]
) -> None:
    """Register the queue of `key` as a part, then add `entries` (member: score) to it, and
    note each in the index."""
    rc.sadd(keys.PARTS, part_of(key))
    rc.zadd(key, dict(entries))
    name = key.rpartition(":")[2]
    notes = {
        jid: located.value(name, score)
        for member, score in entries.items()
        if (jid := jid_of(member.encode() if isinstance(member, str) else member))
    }
    if notes:
        rc.hset(keys.located_of(key), mapping=notes)
