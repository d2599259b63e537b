"""A layout step's splits (`domain.layout.Step.splits`): a sorted set or a list kept for
all queues at once, its entries moved one by one to the one of the queue each names
(layout step 8: the scheduled, retry and dead sets; layout step 9: the lists of jobs left
for a reconciler, hand-overs and parked repeat orphans and hand-backs; layout step 10: each
process's in-progress list, a family of lists, `SplitMatching`).

Data and the one decision, where an entry goes; `adapters.layout_split` reads the
entries and moves each with one script.
"""

from __future__ import annotations

import json
from typing import Literal

import attrs

from cogworker.domain.layout_moves import WILDCARD
from cogworker.domain.queues import name_problem

#: The Redis types whose entries a `Split` moves: a sorted set's each with its score, a
#: list's from its left end to the right end of its queue's (the order kept per queue).
SplitKind = Literal["zset", "list"]


@attrs.frozen(kw_only=True)
class Split:
    """The entries of the key `old` of Redis type `kind`, each moved to the key named
    `new` with its (first) `*` replaced by the queue the entry names (`queue_named`); with
    an `owner`, a set that gets each entry's queue before its move (a process's set of
    the queues it holds in-progress lists on)."""

    old: str
    new: str = attrs.field()
    kind: SplitKind = "zset"
    owner: str | None = None

    @new.validator
    def _a_wildcard(self, attribute: attrs.Attribute[str], value: str) -> None:
        if WILDCARD not in value:
            raise ValueError(f"{attribute.name} must hold a {WILDCARD!r}: {value!r}")

    def target(self, member: bytes) -> str:
        """The set `member` goes to."""
        head, _, tail = self.new.partition(WILDCARD)
        return head + queue_named(member) + tail


def queue_named(member: bytes) -> str:
    """The queue an entry names: its payload's `queue`, when it is a JSON object whose
    `queue` may name one (even if the rest of it isn't a job a worker could run: that
    queue's poller files it in that queue's dead set); else "", the part of the empty queue
    name, which every merged read looks in."""
    try:
        record = json.loads(member)
    except (ValueError, RecursionError):
        return ""
    # A hand-over's record (an outcome) names its queue as a job's payload does.
    queue = record.get("queue") if isinstance(record, dict) else None
    return queue if isinstance(queue, str) and name_problem(queue) is None else ""


#: Layout step 8's: the scheduled, retry and dead sets per queue.
SET_SPLITS: tuple[Split, ...] = tuple(
    Split(old=f"cogworker:{name}", new=f"cogworker:{{q:{WILDCARD}}}:{name}")
    for name in ("schedule", "retry", "dead")
)

#: Layout step 9's: the lists of jobs left for a reconciler per queue.
LIST_SPLITS: tuple[Split, ...] = tuple(
    Split(old=f"cogworker:{name}", new=f"cogworker:{{q:{WILDCARD}}}:{name}", kind="list")
    for name in ("unsettled", "repeat_orphans", "repeat_handbacks")
)


@attrs.frozen(kw_only=True)
class SplitMatching:
    """A family of lists split each on its own: every key named `old` then a part of its
    own (a process's identity) is a `Split` of kind "list" to `new` with its first `*` the
    queue each entry names and its second that part, each queue added first to `owner`
    with its `*` that part.  A migration finds the members by a scan."""

    old: str = attrs.field()
    new: str
    owner: str

    @old.validator
    def _ends_in_wildcard(self, attribute: attrs.Attribute[str], value: str) -> None:
        if not value.endswith(WILDCARD) or value.count(WILDCARD) != 1:
            raise ValueError(f"{attribute.name} must end in its one {WILDCARD!r}: {value!r}")

    def matches(self, name: str) -> bool:
        """Whether `name` is one of the family's old lists."""
        return name.startswith(self.old[:-1]) and len(name) > len(self.old) - 1

    def split(self, name: str) -> Split:
        """The split of the family's old list `name` (one it `matches`)."""
        if not self.matches(name):
            raise ValueError(f"{name!r} is not named like {self.old!r}")
        part = name[len(self.old) - 1 :]
        head, _, tail = self.new.partition(WILDCARD)
        owner = self.owner.replace(WILDCARD, part, 1)
        return Split(old=name, new=head + WILDCARD + tail.replace(WILDCARD, part, 1),
                     kind="list", owner=owner)  # fmt: skip


#: Layout step 10's: each process's in-progress list, one per (process, queue), the
#: process's set of its queues filled as its entries move.
IN_PROGRESS_SPLITS: tuple[SplitMatching, ...] = (
    SplitMatching(
        old="cogworker:inprogress:*",
        new="cogworker:{q:*}:inprogress:*",
        owner="cogworker:{p:*}:queues",
    ),
)
