"""A bulk action's way through a sorted set, batch by batch: which entries are new to it,
where its next batch starts, and its tally.

A bulk action walks the set in walk order (by score, then by the queue whose
share of the set holds it, then by member: within one queue's set, the order
Redis keeps; `order`), acts on the matching entries of each batch, and takes
them out of the set as it goes.  Two places say where it is:

* `reached`, the last entry it has handled: only entries past it, by
  (score, queue, member), are new to it, so none is counted or acted on twice
  when a batch starts a little early (the dashboard's cursor backs off when
  its entry has gone);
* `resume`, the entry the next batch starts after: the last entry of the
  batch still in the set, its place among the entries of its queue's set
  sharing its score (`tie`) less the entries before it there that left.  The entries that
  left don't shift it, so no entry after it is skipped.

Each batch either takes entries out of the set or moves `resume` on, so
the walk ends on a set that others don't keep filling.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs


@attrs.frozen(kw_only=True)
class Mark:
    """An entry as a walk saw it: its score, its bytes, its place among the entries of its
    queue's set sharing its score, and that queue (its part of the merged sets)."""

    score: float
    member: bytes
    tie: int
    part: str = ""


def order(score: float, part: str, member: bytes) -> tuple[float, str, bytes]:
    """Where an entry comes in the ascending walk of the sets merged over queues (the
    descending walk is the reverse): by score, then by queue, then by member."""
    return score, part, member


@attrs.frozen(kw_only=True)
class Position:
    """Where a bulk action is: None for either means the set's start."""

    reached: Mark | None = None
    resume: Mark | None = None


@attrs.frozen(kw_only=True)
class Tally:
    """What a bulk action has done so far: entries looked at, matching, acted on, already
    gone when it came to them, and skipped (not a job payload with a queue)."""

    scanned: int = 0
    matched: int = 0
    done: int = 0
    gone: int = 0
    skipped: int = 0

    def plus(self, other: Tally) -> Tally:
        """Both tallies added up."""
        return Tally(
            scanned=self.scanned + other.scanned,
            matched=self.matched + other.matched,
            done=self.done + other.done,
            gone=self.gone + other.gone,
            skipped=self.skipped + other.skipped,
        )


def is_past(mark: Mark, reached: Mark | None, *, descending: bool) -> bool:
    """Whether `mark` comes after `reached` in walk order (everything does after the start)."""
    if reached is None:
        return True
    here = order(mark.score, mark.part, mark.member)
    there = order(reached.score, reached.part, reached.member)
    return here < there if descending else here > there


def fresh(batch: Sequence[Mark], position: Position, *, descending: bool) -> list[Mark]:
    """The entries of a batch the action has not handled yet."""
    return [mark for mark in batch if is_past(mark, position.reached, descending=descending)]


def advance(
    position: Position, batch: Sequence[Mark], left: Sequence[bool], *, descending: bool
) -> Position:
    """Where the action is after a batch (in walk order) whose entries flagged in `left`
    are out of the set now (moved by it, or already gone)."""
    if not batch:
        return position
    # The batch is in walk order: if any entry is new, its last one is.
    last_walked = batch[-1]
    past = is_past(last_walked, position.reached, descending=descending)
    reached = last_walked if past else position.reached
    staying = [index for index, gone in enumerate(left) if not gone]
    if not staying:
        # Everything walked left, all of it after `resume`: its place holds.
        return Position(reached=reached, resume=position.resume)
    last = staying[-1]
    resume = batch[last]
    shift = sum(
        1
        for mark, gone in zip(batch[:last], left[:last], strict=True)
        if gone and mark.score == resume.score and mark.part == resume.part
    )
    return Position(reached=reached, resume=attrs.evolve(resume, tie=resume.tie - shift))
