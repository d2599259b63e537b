"""A layout step's rewrites on one Redis (`domain.layout_rewrites.Rewrite`): the keys they
cover, the entries to rewrite, each written by one script (`lua/rewrite_entry.lua`).

Entries are read in pages as the rewrite goes (a list from its right end,
so that pushes onto its left end don't shift what was read; a sorted set or
a hash by a scan, which returns every entry present throughout at least
once); each is decided by `domain.relock` and rewritten where it is, with
its job's locks.  An entry rewritten already decides nothing, so a run cut
short anywhere is finished by running it again.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from cogworker.adapters.layout_store import SCAN_COUNT, KeyReport, glob
from cogworker.adapters.pipelines import run_paged
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript
from cogworker.domain.layout_moves import WILDCARD
from cogworker.domain.layout_rewrites import EntryKind, Rewrite
from cogworker.domain.relock import Relocked, relocked

REWRITE_ENTRY = LuaScript("rewrite_entry")
#: Entries read per round trip, and rewrites sent per pipeline.
PAGE = 500


@attrs.frozen(kw_only=True)
class EntryRewrite:
    """One entry to rewrite: its key and that key's type, where it was read (a list's index
    from the right end, a hash's field, "" in a sorted set), the entry as read, and what it
    becomes."""

    key: str
    kind: EntryKind
    place: str
    entry: bytes
    rewrite: Relocked


def keys_of(client: RedisClient, rewrite: Rewrite) -> list[str]:
    """The keys `rewrite` covers that exist with its type, in name order."""
    if WILDCARD in rewrite.pattern:
        found = client.scan_iter(match=glob(rewrite.pattern), count=SCAN_COUNT)
        names = {as_bytes(name).decode() for name in found}
    else:
        names = {rewrite.pattern}
    return sorted(name for name in names if as_bytes(client.type(name)).decode() == rewrite.kind)


def entry_rewrites(client: RedisClient, key: str, kind: EntryKind) -> Iterator[EntryRewrite]:
    """The entries of `key` to rewrite, read a page at a time as they are taken."""
    for place, entry in _entries(client, key, kind):
        decided = relocked(entry)
        if decided is not None:
            yield EntryRewrite(key=key, kind=kind, place=place, entry=entry, rewrite=decided)


def _entries(client: RedisClient, key: str, kind: EntryKind) -> Iterator[tuple[str, bytes]]:
    if kind == "list":
        yield from _list_entries(client, key)
    elif kind == "zset":
        for member, _ in client.zscan_iter(key, count=PAGE):
            yield "", as_bytes(member)
    else:
        for field, value in client.hscan_iter(key, count=PAGE):
            yield as_bytes(field).decode(), as_bytes(value)


def _list_entries(client: RedisClient, key: str) -> Iterator[tuple[str, bytes]]:
    """A list's entries from its right end, each with its index counted from there."""
    done = 0
    while True:
        page = client.lrange(key, -(done + PAGE), -(done + 1))
        for offset, entry in enumerate(reversed(page)):
            yield str(-(done + 1 + offset)), as_bytes(entry)
        if len(page) < PAGE:
            return
        done += PAGE


def rewrite_entry(client: RedisClient, each: EntryRewrite) -> str:
    """Rewrite one entry where it is, its job's locks with it: "rewritten" or "absent"."""
    return as_bytes(REWRITE_ENTRY(client, *_call(each))).decode()


def _call(each: EntryRewrite) -> tuple[list[str], list[str | bytes]]:
    locks = [name for move in each.rewrite.moves for name in (move.old, move.new)]
    args: list[str | bytes] = [each.kind, each.place, each.entry]
    args += [each.rewrite.entry, each.rewrite.holder]
    return [each.key, *locks], args


def rewrite_all(client: RedisClient, rewrite: Rewrite) -> int:
    """Every entry `rewrite` covers, rewritten: how many this call did (a pipeline of a
    page's scripts per round trip: each script one entry's move)."""
    return sum(
        run_paged(
            client,
            REWRITE_ENTRY,
            map(_call, entry_rewrites(client, key, rewrite.kind)),
            page=PAGE,
            counted=b"rewritten",
        )
        for key in keys_of(client, rewrite)
    )


def report(client: RedisClient, rewrite: Rewrite) -> KeyReport:
    """`rewrite` as a dry run shows it: the entries it would rewrite now, in keys of its
    type (type "none": no entry to rewrite)."""
    entries = sum(
        1 for key in keys_of(client, rewrite) for _ in entry_rewrites(client, key, rewrite.kind)
    )
    kind = rewrite.kind if entries else "none"
    return KeyReport(old=rewrite.pattern, new=rewrite.pattern, kind=kind, entries=entries)
