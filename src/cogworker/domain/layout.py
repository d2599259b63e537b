"""The key layout's steps, and what a process does given the layout number Redis holds.

The move to a layout Redis Cluster can run (docs/redis-cluster.md) lands
step by step; each step that renames keys is one entry of `STEPS`, and
`cogworker:layout` holds how many of them a Redis has had applied (missing:
none, or a Redis cogworker never wrote to).  A process of this code reads
it at start and asks `verdict`; `cogworker migrate` applies the `pending`
steps in order and raises the number after each.  Everything here is data
and decisions: the keys are read and moved by `adapters.layout_store`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping
from typing import Literal

import attrs

from cogworker.domain.layout_rewrites import LOCK_REWRITES, Rewrite

#: The command that applies the missing steps, as refusals name it.
MIGRATE = "cogworker migrate"

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


@attrs.frozen(kw_only=True)
class Step:
    """One layout step: its number (the layout a Redis holds once it is applied), what it
    changes in words, the keys it renames, the families of keys it renames each, and the
    keys whose entries it rewrites."""

    number: int
    summary: str
    renames: tuple[Rename, ...]
    families: tuple[RenameMatching, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()


#: Every step, in the order they apply; a step's number is its place (1, 2, ...).
STEPS: tuple[Step, ...] = (
    Step(
        number=1,
        summary="the periodic schedule and its epoch under the {periodic} hash tag",
        renames=(
            Rename(old="cogworker:periodic:schedule", new="cogworker:{periodic}:schedule"),
            Rename(old="cogworker:periodic:epoch", new="cogworker:{periodic}:epoch"),
        ),
    ),
    Step(
        number=2,
        summary="every queue's list, and its batch callbacks' markers, under the queue's {q:NAME}",
        renames=(),
        families=(
            # A marker was named in the slot of its queue's list: by the list's whole name
            # as the hash tag, or by the list's own tag when its queue's name held one.
            RenameMatching(
                old="{cogworker:queue:*}:batch_callback:*",
                new="cogworker:{q:*}:queue:batch_callback:*",
                kind="string",
            ),
            RenameMatching(
                old="cogworker:queue:*:batch_callback:*",
                new="cogworker:{q:*}:queue:batch_callback:*",
                kind="string",
            ),
            RenameMatching(old="cogworker:queue:*", new="cogworker:{q:*}:queue", kind="list"),
        ),
    ),
    Step(
        number=3,
        summary="the counters per queue; the global ones to the part of the empty queue name",
        renames=(),
        families=(
            RenameMatching(old="cogworker:stat:*", new="cogworker:{q:}:stat:*", merge="add"),
        ),
    ),
    Step(
        number=4,
        summary="each class's run history per queue; the global ones to the empty queue name's",
        renames=(),
        families=(
            RenameMatching(old="cogworker:class_history:*", new="cogworker:{q:}:class_history:*"),
        ),
    ),
    Step(
        number=5,
        summary="each job's own records in its queue's slot; the old ones to the empty queue's",
        renames=(),
        # An old record's name doesn't say its job's queue, nor does a status hash or a
        # counter: every one goes to the part of the empty queue name, which reads of a
        # jid's records merge in (`adapters.job_records`).
        families=(
            RenameMatching(old="cogworker:status:*", new="cogworker:{q:}:status:*"),
            RenameMatching(old="cogworker:job_attempts:*", new="cogworker:{q:}:attempts:*"),
            RenameMatching(old="cogworker:history:*", new="cogworker:{q:}:history:*"),
            RenameMatching(old="cogworker:orphanings:*", new="cogworker:{q:}:orphanings:*"),
            RenameMatching(old="cogworker:handbacks:*", new="cogworker:{q:}:handbacks:*"),
        ),
    ),
    Step(
        number=6,
        summary="unique and running locks in their queue's slot, and the records naming them",
        renames=(),
        rewrites=LOCK_REWRITES,
    ),
    Step(
        number=7,
        summary="each process's heartbeat, threads, signals and memory under its {p:IDENTITY}",
        renames=(),
        families=(
            RenameMatching(old="cogworker:process:*", new="cogworker:{p:*}:process", kind="hash"),
            RenameMatching(old="cogworker:workers:*", new="cogworker:{p:*}:workers", kind="hash"),
            RenameMatching(old="cogworker:signal:*", new="cogworker:{p:*}:signal", kind="list"),
            RenameMatching(old="cogworker:memory:*", new="cogworker:{p:*}:memory", kind="zset"),
        ),
    ),
)


def current(steps: tuple[Step, ...] = STEPS) -> int:
    """The layout this code reads and writes: the number of its last step (0: none)."""
    return steps[-1].number if steps else 0


def pending(stored: int, steps: tuple[Step, ...] = STEPS) -> tuple[Step, ...]:
    """The steps a Redis holding layout `stored` still needs, in order."""
    return tuple(step for step in steps if step.number > stored)


@attrs.frozen(kw_only=True)
class Planned:
    """A step as a migration applies it: the keys it moves (then the number is raised to
    the step's, which never lowers it)."""

    step: Step
    renames: tuple[Rename, ...]
    rewrites: tuple[Rewrite, ...] = ()


def plan(stored: int, found: Collection[str], steps: tuple[Step, ...] = STEPS) -> list[Planned]:
    """What a migration from layout `stored` does, in order: every rename of each pending
    step; of the steps applied already, the renames whose old key is `found` again (a
    process of an older release wrote it after the migration), so a run moves those too.
    A family's members are the `found` keys it matches, pending or not (in name order).
    Rewrites run while their step is pending only: a record an older release wrote since
    names its locks where that release took them, and its settlement releases them there."""
    planned = []
    for step in steps:
        pending_step = step.number > stored
        renames = tuple(r for r in step.renames if pending_step or r.old in found)
        renames += tuple(
            family.rename(name)
            for family in step.families
            for name in sorted(found)
            if family.matches(name)
        )
        if pending_step or renames:
            rewrites = step.rewrites if pending_step else ()
            planned.append(Planned(step=step, renames=renames, rewrites=rewrites))
    return planned


def old_names(steps: tuple[Step, ...]) -> tuple[str, ...]:
    """The keys `steps` move away from: any of them found means they weren't applied."""
    return tuple(rename.old for step in steps for rename in step.renames)


def old_families(steps: tuple[Step, ...]) -> tuple[RenameMatching, ...]:
    """The families of keys `steps` move away from: a member found means the same."""
    return tuple(family for step in steps for family in step.families)


def is_old(name: str, steps: tuple[Step, ...] = STEPS) -> bool:
    """Whether `name` is a key some step moves away from (by name or by family)."""
    return name in old_names(steps) or any(f.matches(name) for f in old_families(steps))


@attrs.frozen(kw_only=True)
class Ready:
    """Redis holds this code's layout: go."""


@attrs.frozen(kw_only=True)
class Fresh:
    """No layout number, and none of the keys the steps move: a Redis holding no data of an
    older layout.  Write `number` (only if still missing, SET NX) and go."""

    number: int


@attrs.frozen(kw_only=True)
class Outdated:
    """Redis holds an older layout than this code's: refuse until the steps are applied."""

    stored: int
    current: int

    @property
    def problem(self) -> str:
        """The refusal, naming the command that cures it."""
        return (
            f"this Redis holds cogworker keys of layout {self.stored}, this code uses layout "
            f"{self.current}: stop the workers and run `{MIGRATE}` (`--dry-run` shows what "
            "it would move)"
        )


@attrs.frozen(kw_only=True)
class Newer:
    """Redis holds a newer layout than this code's (a newer release migrated it): refuse,
    rather than write keys where the newer code no longer looks."""

    stored: int
    current: int

    @property
    def problem(self) -> str:
        """The refusal, naming the cure."""
        return (
            f"this Redis holds cogworker keys of layout {self.stored}, newer than this code's "
            f"layout {self.current}: upgrade cogworker"
        )


Verdict = Ready | Fresh | Outdated | Newer


def verdict(stored: int | None, found: Collection[str], steps: tuple[Step, ...] = STEPS) -> Verdict:
    """What a process does on a Redis holding layout `stored` (None: missing), where
    `found` are keys that exist: those of `old_names(steps)`, and any of `old_families`."""
    latest = current(steps)
    if stored is None:
        if any(is_old(name, steps) for name in found):
            return Outdated(stored=0, current=latest)
        return Fresh(number=latest)
    if stored < latest:
        return Outdated(stored=stored, current=latest)
    if stored > latest:
        return Newer(stored=stored, current=latest)
    return Ready()


def refusal(verdict: Verdict) -> str | None:
    """Why a process of this code must not go on with this verdict; None: it may."""
    return verdict.problem if isinstance(verdict, Outdated | Newer) else None


def still_beating(beats: Mapping[str, float | None], now: float, threshold: float) -> list[str]:
    """The processes (sorted) whose latest beat is younger than `threshold` seconds at
    `now`: workers still running, which a migration must wait for (they would go on
    writing keys where their code looks).  None: no beat found (the process is gone)."""
    return sorted(
        identity for identity, beat in beats.items() if beat is not None and now - beat < threshold
    )
