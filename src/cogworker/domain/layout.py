"""The key layout's steps, and what a process does given the layout number Redis holds.

The move to a layout Redis Cluster can run (docs/redis-cluster.md) lands
step by step; each step that renames keys is one entry of `STEPS`, and
`cogworker:layout` holds how many of them a Redis has had applied (missing:
none, or a Redis cogworker never wrote to).  A process of this code reads
it at start and asks `layout_verdicts.verdict`; `cogworker migrate` applies
the `pending` steps in order and raises the number after each.  Everything here is data
and decisions: the keys are read and moved by `adapters.layout_store`.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from cogworker.domain.layout_moves import Rename, RenameMatching
from cogworker.domain.layout_rewrites import LOCK_REWRITES, Rewrite
from cogworker.domain.layout_splits import (
    IN_PROGRESS_SPLITS,
    LIST_SPLITS,
    SET_SPLITS,
    Split,
    SplitMatching,
)

#: The command that applies the missing steps, as refusals name it.
MIGRATE = "cogworker migrate"


@attrs.frozen(kw_only=True)
class Step:
    """One layout step: its number (the layout a Redis holds once it is applied), what it
    changes in words, the keys it renames, the families of keys it renames each, the
    keys whose entries it rewrites, the sorted sets and lists whose entries it moves
    to their queues' keys, and the names of the queues' sets whose entries it notes in
    their queue's jid index of the sets (`indexes`: each queue's set of that name)."""

    number: int
    summary: str
    renames: tuple[Rename, ...]
    families: tuple[RenameMatching, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()
    splits: tuple[Split, ...] = ()
    split_families: tuple[SplitMatching, ...] = ()
    indexes: tuple[str, ...] = ()


#: A family of keys a step moves away from, found by a scan: renamed or split each.
Family = RenameMatching | SplitMatching


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
    Step(
        number=8,
        summary="the scheduled, retry and dead sets per queue, each entry to its queue's",
        renames=(),
        splits=SET_SPLITS,
    ),
    Step(
        number=9,
        summary="the hand-over and parking lists per queue, each entry to its queue's",
        renames=(),
        splits=LIST_SPLITS,
    ),
    Step(
        number=10,
        summary="each process's in-progress list per queue, each entry to its queue's",
        renames=(),
        split_families=IN_PROGRESS_SPLITS,
    ),
    Step(
        number=11,
        summary="a jid index of each queue's scheduled, retry and dead sets, in its slot",
        renames=(),
        indexes=("schedule", "retry", "dead"),
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
    splits: tuple[Split, ...] = ()
    indexes: tuple[str, ...] = ()


def plan(stored: int, found: Collection[str], steps: tuple[Step, ...] = STEPS) -> list[Planned]:
    """What a migration from layout `stored` does, in order: every rename of each pending
    step; of the steps applied already, the renames whose old key is `found` again (a
    process of an older release wrote it after the migration), so a run moves those too.
    A family's members are the `found` keys it matches, pending or not (in name order).
    Rewrites run while their step is pending only: a record an older release wrote since
    names its locks where that release took them, and its settlement releases them there.
    Splits run like renames: while pending, or when their old set is `found` again.  Indexes
    are built while their step is pending only: once built, the scripts keep them."""
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
        splits = tuple(s for s in step.splits if pending_step or s.old in found)
        splits += tuple(
            family.split(name)
            for family in step.split_families
            for name in sorted(found)
            if family.matches(name)
        )
        if pending_step or renames or splits:
            rewrites = step.rewrites if pending_step else ()
            indexes = step.indexes if pending_step else ()
            planned.append(
                Planned(
                    step=step, renames=renames, rewrites=rewrites, splits=splits, indexes=indexes
                )
            )
    return planned


def old_names(steps: tuple[Step, ...]) -> tuple[str, ...]:
    """The keys `steps` move away from: any of them found means they weren't applied."""
    renamed = tuple(rename.old for step in steps for rename in step.renames)
    return renamed + tuple(split.old for step in steps for split in step.splits)


def old_families(steps: tuple[Step, ...]) -> tuple[Family, ...]:
    """The families of keys `steps` move away from: a member found means the same."""
    renamed: tuple[Family, ...] = tuple(family for step in steps for family in step.families)
    return renamed + tuple(family for step in steps for family in step.split_families)


def is_old(name: str, steps: tuple[Step, ...] = STEPS) -> bool:
    """Whether `name` is a key some step moves away from (by name or by family)."""
    return name in old_names(steps) or any(f.matches(name) for f in old_families(steps))
