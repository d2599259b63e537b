"""The key layout on one Redis: its number, the keys an older layout left, and the moves
`cogworker migrate` makes (the steps and the decisions are `domain.layout`'s).

Every read here is a single-key command and every write one key or one
script (`lua/move_key.lua`, `lua/raise_layout.lua`), so a migration cut
short at any point leaves each key under its old name or its new one, and
a run again finishes it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import AsyncRedisClient, RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript
from cogworker.domain import layout, layout_moves, layout_verdicts
from cogworker.domain.layout import Step
from cogworker.domain.layout_moves import Rename
from cogworker.domain.layout_verdicts import Fresh, Ready, Verdict

MOVE_KEY = LuaScript("move_key")
RAISE_LAYOUT = LuaScript("raise_layout")
#: Keys a SCAN step looks at: large, as a migration's scans cross the whole keyspace.
SCAN_COUNT = 1000
#: The characters a SCAN MATCH pattern reads as more than themselves.
GLOB_SPECIAL = frozenset("*?[]\\")


@attrs.frozen(kw_only=True)
class KeyReport:
    """One rename as a dry run shows it: the old key's type ("none": nothing to move) and
    entry count (1 for a string), and where it goes."""

    old: str
    new: str
    kind: str
    entries: int


@attrs.define
class LayoutStore:
    """The layout number and the layout steps' keys on one Redis."""

    client: RedisClient

    def stored(self) -> int | None:
        """The layout number Redis holds; None if it holds none."""
        return layout_number(self.client.get(keys.LAYOUT))

    def found(self, steps: tuple[Step, ...] = layout.STEPS) -> frozenset[str]:
        """The old keys of `steps` that exist: their names (an EXISTS each, in one round
        trip) and every member of their families (a scan each)."""
        names = layout.old_names(steps)
        pipe = pipelines.pipeline(self.client)
        for name in names:
            pipe.exists(name)
        named = {name for name, n in zip(names, pipe.execute(), strict=True) if n}
        members = {
            as_bytes(name).decode()
            for family in layout.old_families(steps)
            for name in self.client.scan_iter(match=scan_pattern(family), count=SCAN_COUNT)
        }
        return frozenset(named | {name for name in members if layout.is_old(name, steps)})

    def verdict(self, steps: tuple[Step, ...] = layout.STEPS, *, scan: bool = True) -> Verdict:
        """What a process of this code does on this Redis (`domain.layout_verdicts.verdict`): the
        number and the old keys read in one round trip (an EXISTS each: single-key); with
        no number, a scan for a member of each family too, stopping at the first (unless
        `scan` is False: the fixed names then decide alone)."""
        names = layout.old_names(steps)
        pipe = pipelines.pipeline(self.client)
        pipe.get(keys.LAYOUT)
        for name in names:
            pipe.exists(name)
        raw, *found = pipe.execute()
        members = self._first_members(steps) if raw is None and scan else []
        return _verdict(raw, names, found, members, steps)

    def _first_members(self, steps: tuple[Step, ...]) -> list[str]:
        return [
            as_bytes(name).decode()
            for family in layout.old_families(steps)
            for name in itertools.islice(
                self.client.scan_iter(match=scan_pattern(family), count=SCAN_COUNT), 1
            )
        ]

    def admit(self, steps: tuple[Step, ...] = layout.STEPS) -> Verdict:
        """The verdict, once a fresh Redis has this code's number written (SET NX: of
        several processes starting at once, one writes it; the others read it again)."""
        verdict = self.verdict(steps)
        if isinstance(verdict, Fresh):
            if self.client.set(keys.LAYOUT, verdict.number, nx=True):
                return Ready()
            return self.verdict(steps)
        return verdict

    def report(self, renames: Iterable[Rename]) -> list[KeyReport]:
        """What moving `renames` would move, read and not written."""
        return [self._report(rename) for rename in renames]

    def _report(self, rename: Rename) -> KeyReport:
        kind = as_bytes(self.client.type(rename.old)).decode()
        if rename.kind not in (None, kind):
            kind = "none"  # another family's key: this rename leaves it
        entries = self._entries(rename.old, kind)
        return KeyReport(old=rename.old, new=rename.new, kind=kind, entries=entries)

    def _entries(self, name: str, kind: str) -> int:
        """How many entries the key `name` of type `kind` holds (a string: 1, none: 0)."""
        if kind == "none":
            return 0
        sizes = {
            "hash": self.client.hlen,
            "list": self.client.llen,
            "set": self.client.scard,
            "zset": self.client.zcard,
        }
        size = sizes.get(kind)
        return 1 if size is None else int(size(name))

    def move(self, rename: Rename) -> str:
        """Move one key to its new name (see `lua/move_key.lua`): "absent", "renamed" or
        "merged"."""
        moved = MOVE_KEY(self.client, (rename.old, rename.new), (rename.kind or "", rename.merge))
        return as_bytes(moved).decode()

    def applied(self, step: Step) -> int:
        """Note `step` as applied (the number only goes up); the number stored now."""
        return int(RAISE_LAYOUT(self.client, (keys.LAYOUT,), (step.number,)))


async def admit_async(client: AsyncRedisClient, steps: tuple[Step, ...] = layout.STEPS) -> Verdict:
    """`LayoutStore.admit` for an asyncio client."""
    names = layout.old_names(steps)
    pipe = pipelines.pipeline_async(client)
    pipe.get(keys.LAYOUT)
    for name in names:
        pipe.exists(name)
    raw, *found = await pipe.execute()
    members = []
    if raw is None:
        for family in layout.old_families(steps):
            async for name in client.scan_iter(match=scan_pattern(family), count=SCAN_COUNT):
                members.append(as_bytes(name).decode())
                break
    verdict = _verdict(raw, names, found, members, steps)
    if isinstance(verdict, Fresh):
        if await client.set(keys.LAYOUT, verdict.number, nx=True):
            return Ready()
        return await admit_async(client, steps)
    return verdict


def layout_number(raw: bytes | str | None) -> int | None:
    """The layout number as stored (None: none); ValueError naming the key if it is no
    number."""
    if raw is None:
        return None
    text = as_bytes(raw).decode(errors="replace")
    if not text.isdigit():
        raise ValueError(f"{keys.LAYOUT} holds {text!r}, not a layout number")
    return int(text)


def scan_pattern(family: layout.Family) -> str:
    """A SCAN MATCH pattern for the family's old keys: its `*`s wildcards, the rest literal."""
    return glob(family.old)


def glob(name: str) -> str:
    """A SCAN MATCH pattern for the keys named like `name`: its `*`s wildcards, the rest
    literal."""
    return "*".join(_glob_literal(text) for text in name.split(layout_moves.WILDCARD))


def _glob_literal(text: str) -> str:
    return "".join("\\" + char if char in GLOB_SPECIAL else char for char in text)


def _verdict(
    raw: bytes | None,
    names: Sequence[str],
    exists: Sequence[int],
    members: Iterable[str],
    steps: tuple[Step, ...],
) -> Verdict:
    """The verdict on what was read: the number, EXISTS of each old name, and the family
    members a scan found."""
    found = {name for name, count in zip(names, exists, strict=True) if count}
    found |= {name for name in members if layout.is_old(name, steps)}
    return layout_verdicts.verdict(layout_number(raw), found, steps)
