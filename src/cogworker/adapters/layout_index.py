"""A layout step's indexes (`domain.layout.Step.indexes`, layout step 11): the entries the
scheduled, retry and dead sets held before the scripts kept their queue's jid index
(`adapters.located`), each noted in it by one script (`lua/index_entry.lua`).

Every queue of `cogworker:parts` (and the migrated part) has its set of each name read
with `ZSCAN`, which returns every entry there from the start to the end of the walk
however the set changes meanwhile; each entry's note is written only while the entry is
still in its set, so a run cut short anywhere, or run again, writes the same index.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import cast

import attrs

from cogworker.adapters import parts, pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import KeyReport
from cogworker.adapters.pipelines import run_paged
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript

INDEX_ENTRY = LuaScript("index_entry")
#: Entries a `ZSCAN` call asks for, and notes sent per pipeline.
PAGE = 500


@attrs.frozen(kw_only=True)
class EntryNote:
    """One entry of a queue's set to note in the queue's jid index, and its jid."""

    sorted_set: str
    member: bytes
    jid: str


def jid_of(member: bytes) -> str:
    """The jid a set's member names: its payload's `jid` ("" for an entry that isn't a job's
    payload, which is never indexed; `jid_of` in `lua/_located.lua` reads it alike)."""
    try:
        record = json.loads(member)
    except (ValueError, RecursionError):
        return ""
    jid = record.get("jid") if isinstance(record, dict) else None
    return jid if isinstance(jid, str) else ""


def sets_named(client: RedisClient, name: str) -> list[str]:
    """The set `name` of every queue of `cogworker:parts`, and of the migrated part."""
    registered = cast("set[bytes]", client.smembers(keys.PARTS))
    return [keys.sorted_set(name, queue) for queue in parts.queues(registered)]


def notes(client: RedisClient, sorted_set: str) -> Iterator[EntryNote]:
    """The notes of the set's entries that name a jid, a `ZSCAN` page per round trip."""
    for member, _ in client.zscan_iter(sorted_set, count=PAGE):
        jid = jid_of(as_bytes(member))
        if jid:
            yield EntryNote(sorted_set=sorted_set, member=as_bytes(member), jid=jid)


def index_entry(client: RedisClient, note: EntryNote) -> bool:
    """Note one entry (if still in its set); True if this call wrote it."""
    return as_bytes(INDEX_ENTRY(client, *_call(note))) == b"indexed"


def index_all(client: RedisClient, name: str) -> int:
    """Every entry of every queue's set `name` noted: how many this call did (a page's
    scripts pipelined per round trip)."""
    return sum(
        run_paged(
            client,
            INDEX_ENTRY,
            map(_call, notes(client, sorted_set)),
            page=PAGE,
            counted=b"indexed",
        )
        for sorted_set in sets_named(client, name)
    )


def _call(note: EntryNote) -> tuple[tuple[str, str], tuple[bytes, str]]:
    return (note.sorted_set, keys.located_of(note.sorted_set)), (note.member, note.jid)


def report(client: RedisClient, name: str) -> KeyReport:
    """The index of the sets `name` as a dry run shows it: their entries, over every queue."""
    pipe = pipelines.pipeline(client)
    for sorted_set in sets_named(client, name):
        pipe.zcard(sorted_set)
    entries = sum(int(count) for count in pipe.execute())
    return KeyReport(
        old=keys.sorted_set(name, "*"),
        new=keys.located("*"),
        kind="zset" if entries else "none",
        entries=entries,
    )
