"""Entries written by hand into a queue's scheduled, retry or dead set, as the engine's
writers leave them: the queue registered in `cogworker:parts` first (merged reads go over
the parts, `adapters.parts`), then the entries."""

from __future__ import annotations

from collections.abc import Mapping

import redis

from cogworker.adapters import redis_keys as keys


def part_of(key: str) -> str:
    """The queue whose sorted set `key` is (`redis_keys.sorted_set`'s name)."""
    return key[len(keys.QUEUE_HEAD) : key.rindex("}:")]


def add_to_set(
    rc: redis.Redis | redis.client.Pipeline, key: str, entries: Mapping[str | bytes, float]
) -> None:
    """Register the queue of `key` as a part, then add `entries` (member: score) to it."""
    rc.sadd(keys.PARTS, part_of(key))
    rc.zadd(key, dict(entries))
