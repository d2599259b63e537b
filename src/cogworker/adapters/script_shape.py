"""A Lua script's shape: how many KEYS and ARGV it takes, as its header states it.

Every script's header states its shape in one line, the contract its
callers keep: ``-- shape: KEYS 14, ARGV 23`` (exactly), or
``-- shape: KEYS 3 + 3n, ARGV 4 + 2n`` (a fixed part, then any number of
groups).  `scripts.LuaScript.check` refuses a call that doesn't fit.
"""

from __future__ import annotations

import re

import attrs

_SHAPE_LINE = re.compile(r"^-- shape: KEYS (\d+)(?: \+ (\d+)n)?, ARGV (\d+)(?: \+ (\d+)n)?$", re.M)


@attrs.frozen
class Count:
    """How many keys (or arguments) a script takes: `fixed`, then groups of `group` (0: none)."""

    fixed: int
    group: int = 0

    def fits(self, count: int) -> bool:
        """Whether `count` items make the fixed part and whole groups."""
        extra = count - self.fixed
        if self.group == 0:
            return extra == 0
        return extra >= 0 and extra % self.group == 0

    def __str__(self) -> str:
        return f"{self.fixed} + {self.group}n" if self.group else str(self.fixed)


@attrs.frozen
class Shape:
    """A script's contract: how many KEYS and ARGV it takes."""

    keys: Count
    args: Count

    @classmethod
    def of(cls, name: str, source: str) -> Shape:
        """The shape stated in `source`'s header; ValueError if it states none."""
        found = _SHAPE_LINE.search(source)
        if found is None:
            raise ValueError(f"lua/{name}.lua states no '-- shape: KEYS n, ARGV m' line")
        keys_fixed, keys_group, args_fixed, args_group = found.groups()
        return cls(
            keys=Count(int(keys_fixed), int(keys_group or 0)),
            args=Count(int(args_fixed), int(args_group or 0)),
        )

    def __str__(self) -> str:
        return f"KEYS {self.keys}, ARGV {self.args}"
