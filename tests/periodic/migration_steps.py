"""A migration's writes one by one, and what layout step 6's rewrites and steps 8, 9 and
10's splits make of a Redis's keys as values (tests/periodic/test_migrate*.py)."""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Iterator
from typing import Any

from cogworker.adapters import layout_index, layout_rewrite, layout_split, located
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import LayoutStore
from cogworker.domain import layout, relock
from cogworker.domain.layout_rewrites import Rewrite
from cogworker.domain.layout_splits import Split, queue_named
from tests.periodic.old_layout import KeyValue


def migration_writes(store: LayoutStore) -> Iterator[Callable[[], object]]:
    """Every write of a migration from layout 0, in the order `cogworker migrate` makes them
    (a key's move, an entry's rewrite, an entry's move to its queue's set or list, a step noted as
    applied), each decided once the writes before it are made: a rewrite reads the keys the
    renames before it left, a split the entries the rewrites left."""
    for each in layout.plan(0, store.found()):
        for rename in each.renames:
            yield functools.partial(store.move, rename)
        for rewrite in each.rewrites:
            for key in layout_rewrite.keys_of(store.client, rewrite):
                for entry in layout_rewrite.entry_rewrites(store.client, key, rewrite.kind):
                    yield functools.partial(layout_rewrite.rewrite_entry, store.client, entry)
        for split in each.splits:
            for move in layout_split.moves(store.client, split):  # the data set: one page
                yield functools.partial(layout_split.move_entry, store.client, move)
        for name in each.indexes:
            yield from _index_writes(store, name)
        yield functools.partial(store.applied, each.step)


def _index_writes(store: LayoutStore, name: str) -> Iterator[Callable[[], object]]:
    """Layout step 11's notes of every queue's sets `name`, one write each."""
    for sorted_set in layout_index.sets_named(store.client, name):
        for note in list(layout_index.notes(store.client, sorted_set)):
            yield functools.partial(layout_index.index_entry, store.client, note)


def cut_short(store: LayoutStore, done: int | None) -> int:
    """The first `done` writes of a migration (None: all); how many were made."""
    made = 0
    for write in migration_writes(store):
        if made == done:
            break
        write()
        made += 1
    return made


def relocked(contents: dict[str, KeyValue]) -> dict[str, KeyValue]:
    """`contents` (a Redis after the renames of a migration) as the rewrites leave it: each
    entry of the keys they cover as `domain.relock` decides (a sorted set's members in
    score order), and each lock held by a rewritten record's jid under its new name."""
    out = dict(contents)
    moves: list[tuple[str, relock.LockMove]] = []
    for key, rewrite in _covered(contents):
        kind, content, expires = contents[key]
        out[key] = (kind, _rewritten(rewrite, content, moves), expires)
    for holder, move in moves:
        value = out.get(move.old)
        if value is not None and value[:2] == ("string", holder.encode()):
            moved = out.pop(move.old)
            out.setdefault(move.new, moved)  # a lock held under its new name already wins
    return out


def split_entries(contents: dict[str, KeyValue]) -> dict[str, KeyValue]:
    """`contents` (a Redis after the rewrites of a migration) as the splits leave it: each
    entry of the old scheduled, retry and dead sets in its queue's set with its score (step
    8), each entry of the old hand-over and parking lists at the end of its queue's list in
    their order (step 9); the part of the empty queue name's for one naming none, each
    other such queue a part."""
    out = dict(contents)
    queues: set[str] = set()
    for split in _splits(contents):
        _, entries, _ = out.pop(split.old, (split.kind, [], False))
        for entry in entries:
            member = entry[0] if split.kind == "zset" else entry
            queues.add(queue_named(member))
            if split.owner is not None:
                _, owned, _ = out.get(split.owner, ("set", [], False))
                named = {*owned, queue_named(member).encode()}
                out[split.owner] = ("set", sorted(named), False)
            _, there, _ = out.get(split.target(member), (split.kind, [], False))
            moved = (
                sorted([*there, entry], key=_by_score) if split.kind == "zset" else [*there, entry]
            )
            out[split.target(member)] = (split.kind, moved, False)
    if queues - {""}:
        _, registered, _ = out.get(keys.PARTS, ("set", [], False))
        parted = set(registered) | {queue.encode() for queue in queues - {""}}
        out[keys.PARTS] = ("set", sorted(parted), False)
    return out


def indexed_entries(contents: dict[str, KeyValue]) -> dict[str, KeyValue]:
    """`contents` (a Redis after the splits of a migration) as layout step 11 leaves it:
    each entry naming a jid of each queue's scheduled, retry and dead sets noted in its
    queue's jid index of the sets (`adapters.located`)."""
    out = dict(contents)
    for key, (kind, entries, _) in sorted(contents.items()):
        name = key.rpartition(":")[2]
        if kind != "zset" or name not in keys.SET_NAMES or not key.startswith(keys.QUEUE_HEAD):
            continue
        notes = {jid.encode(): located.value(name, score).encode()
                 for member, score in entries if (jid := layout_index.jid_of(member))}  # fmt: skip
        if notes:
            _, held, _ = out.get(keys.located_of(key), ("hash", {}, False))
            out[keys.located_of(key)] = ("hash", {**held, **notes}, False)
    return out


def split_rows(contents: dict[str, KeyValue]) -> set[tuple[str, str, int, str]]:
    """A dry run's rows of the splits: each old set or list with entries in `contents`."""
    return {(split.old, split.kind, len(contents[split.old][1]), split.new)
            for split in _splits(contents) if split.old in contents}  # fmt: skip


def _splits(contents: dict[str, KeyValue]) -> list[Split]:
    """Every split a migration from layout 0 makes of `contents`: the steps' splits, and a
    split per member of their families (layout step 10: each process's in-progress list)."""
    return [split for each in layout.plan(0, frozenset(contents)) for split in each.splits]


def rewrite_rows(contents: dict[str, KeyValue]) -> set[tuple[str, str, int, str]]:
    """A dry run's rows of the rewrites: each with entries to rewrite in `contents`."""
    counts: dict[Rewrite, int] = {}
    for key, rewrite in _covered(contents):
        _, content, _ = contents[key]
        entries = content.values() if rewrite.kind == "hash" else content
        found = [e for e in entries if relock.relocked(e if rewrite.kind != "zset" else e[0])]
        counts[rewrite] = counts.get(rewrite, 0) + len(found)
    return {(r.pattern, r.kind, n, r.pattern) for r, n in counts.items() if n}


def _covered(contents: dict[str, KeyValue]) -> Iterator[tuple[str, Rewrite]]:
    """Each key of `contents` a step's rewrite covers, with that rewrite."""
    rewrites = [rewrite for step in layout.STEPS for rewrite in step.rewrites]
    for key, (kind, _, _) in sorted(contents.items()):
        for rewrite in rewrites:
            if kind == rewrite.kind and fnmatch.fnmatchcase(key, _glob(rewrite.pattern)):
                yield key, rewrite


def _glob(pattern: str) -> str:
    """`pattern` for fnmatch: its `*`s wildcards, brackets literal."""
    return pattern.replace("[", "[[]")


def _rewritten(rewrite: Rewrite, content: Any, moves: list[tuple[str, relock.LockMove]]) -> Any:
    def entry(raw: bytes) -> bytes:
        decided = relock.relocked(raw)
        if decided is None:
            return raw
        moves.extend((decided.holder, move) for move in decided.moves if decided.holder)
        return decided.entry.encode()

    if rewrite.kind == "list":
        return [entry(raw) for raw in content]
    if rewrite.kind == "hash":
        return {field: entry(raw) for field, raw in content.items()}
    return sorted(((entry(member), score) for member, score in content), key=_by_score)


def _by_score(item: tuple[bytes, float]) -> tuple[float, bytes]:
    return item[1], item[0]
