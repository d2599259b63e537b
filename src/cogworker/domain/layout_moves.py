"""How a layout step moves a key: whole, by its name (`Rename`), or each member of a family
of keys named alike (`RenameMatching`).  Pure data and the reading of names; the steps
are `domain.layout.STEPS`, the moves are made by `adapters.layout_store`."""

from __future__ import annotations

import functools
import re
from typing import Literal

import attrs

#: How a key found under both names merges into the new one (`lua/move_key.lua`): "keep"
#: the new content where both have some; or "add" two strings holding whole numbers (a
#: counter an older release went on counting under the old name), else as "keep".
Merge = Literal["keep", "add"]


@attrs.frozen(kw_only=True)
class Rename:
    """One key moved whole from its name in the previous layout to its name in the next;
    with a `kind`, only a key of that Redis type (another under the name stays put)."""

    old: str
    new: str
    kind: str | None = None
    merge: Merge = "keep"


#: What stands, in a family's names, for each part a key has of its own.
WILDCARD = "*"


def _wildcards(instance: RenameMatching, attribute: attrs.Attribute[str], value: str) -> None:
    if WILDCARD not in value:
        raise ValueError(f"{attribute.name} must hold a {WILDCARD!r}: {value!r}")
    if attribute.name == "new" and value.count(WILDCARD) != instance.old.count(WILDCARD):
        raise ValueError(f"new must hold as many {WILDCARD!r} as old: {value!r}")


@functools.cache
def _reading(old: str) -> re.Pattern[str]:
    """A name's parts by `old`: each `*` a group, each as long as it can be, left first."""
    return re.compile("(.*)".join(re.escape(text) for text in old.split(WILDCARD)), re.DOTALL)


@attrs.frozen(kw_only=True)
class RenameMatching:
    """A family of keys moved whole, each on its own: every key named like `old` (each `*`
    standing for a part that varies: a queue's name, a counter's name and day, a jid) goes
    to `new` with its `*`s replaced by the same texts, in order.  A migration finds the
    members by a scan.

    A name is read with its first part as long as it can be, then the next, and so on: so
    the parts come out right when none but the first holds the fixed text before it (a
    queue's name may hold `}:batch_callback:`; a callback's jid, hex digits and a word,
    can't).  With a
    `kind`, a member is moved only when it is a key of that Redis type: two families may
    then match one name (the older layout's own names can't tell a queue's list from a
    marker) and each moves the keys of its type."""

    old: str = attrs.field(validator=_wildcards)
    new: str = attrs.field(validator=_wildcards)
    kind: str | None = None
    merge: Merge = "keep"

    def matches(self, name: str) -> bool:
        """Whether `name` is one of the family's old keys."""
        return _reading(self.old).fullmatch(name) is not None

    def rename(self, name: str) -> Rename:
        """The move of the family's old key `name` (one it `matches`)."""
        read = _reading(self.old).fullmatch(name)
        if read is None:
            raise ValueError(f"{name!r} is not named like {self.old!r}")
        fixed = self.new.split(WILDCARD)
        parts = zip(read.groups(), fixed[1:], strict=True)
        new = fixed[0] + "".join(part + text for part, text in parts)
        return Rename(old=name, new=new, kind=self.kind, merge=self.merge)
