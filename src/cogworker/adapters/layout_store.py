"""The key layout on one Redis: its number, the keys an older layout left, and the moves
`cogworker migrate` makes (the steps and the decisions are `domain.layout`'s).

Every read here is a single-key command and every write one key or one
script (`lua/move_key.lua`, `lua/raise_layout.lua`), so a migration cut
short at any point leaves each key under its old name or its new one, and
a run again finishes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript
from cogworker.domain import layout
from cogworker.domain.layout import Fresh, Rename, Step, Verdict

MOVE_KEY = LuaScript("move_key")
RAISE_LAYOUT = LuaScript("raise_layout")


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

    client: redis.Redis

    def stored(self) -> int | None:
        """The layout number Redis holds; None if it holds none."""
        raw = self.client.get(keys.LAYOUT)
        if raw is None:
            return None
        text = as_bytes(raw).decode(errors="replace")
        if not text.isdigit():
            raise ValueError(f"{keys.LAYOUT} holds {text!r}, not a layout number")
        return int(text)

    def found(self, names: Sequence[str]) -> frozenset[str]:
        """Those of `names` that exist (an EXISTS each, in one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for name in names:
            pipe.exists(name)
        return frozenset(name for name, n in zip(names, pipe.execute(), strict=True) if n)

    def verdict(self, steps: tuple[Step, ...] = layout.STEPS) -> Verdict:
        """What a process of this code does on this Redis (`domain.layout.verdict`)."""
        stored = self.stored()
        if stored is not None:
            return layout.verdict(stored, (), steps)
        return layout.verdict(None, self.found(layout.old_names(steps)), steps)

    def admit(self, steps: tuple[Step, ...] = layout.STEPS) -> Verdict:
        """The verdict, once a fresh Redis has this code's number written (SET NX: of
        several processes starting at once, one writes it; the others read it back)."""
        verdict = self.verdict(steps)
        if isinstance(verdict, Fresh):
            self.client.set(keys.LAYOUT, verdict.number, nx=True)
            return self.verdict(steps)
        return verdict

    def report(self, renames: Iterable[Rename]) -> list[KeyReport]:
        """What moving `renames` would move, read and not written."""
        return [self._report(rename) for rename in renames]

    def _report(self, rename: Rename) -> KeyReport:
        kind = as_bytes(self.client.type(rename.old)).decode()
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
        return as_bytes(MOVE_KEY(self.client, (rename.old, rename.new), ())).decode()

    def applied(self, step: Step) -> int:
        """Note `step` as applied (the number only goes up); the number stored now."""
        return int(RAISE_LAYOUT(self.client, (keys.LAYOUT,), (step.number,)))
