"""Properties of a bulk action's way through a set merged over queues (each queue's share a
sorted set of its own): every entry once, every match acted on once, and the next batch
starting right after the last entry that stayed, however many tie, within a queue and
across queues."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.bulk import Mark, Position, Tally, advance, fresh, is_past, order

#: Scores few enough to tie often, and the infinities Redis allows.
SCORES = st.sampled_from([float("-inf"), 1.0, 2.0, 3.0, float("inf")])
#: The queues whose sets the model merges ("": the migrated part).
PARTS = st.sampled_from(["", "a", "b"])


@attrs.frozen(kw_only=True)
class Entry:
    """An entry of the model set: whether the action's filter matches it, and whether the
    action can move it (a match it can't is skipped and stays)."""

    score: float
    member: bytes
    matches: bool
    movable: bool
    part: str = ""


entries = st.lists(
    st.builds(Entry, score=SCORES, member=st.binary(max_size=3), matches=st.booleans(),
              movable=st.booleans(), part=PARTS),
    unique_by=lambda entry: entry.member,
    max_size=60,
)  # fmt: skip


def _ordered(model: list[Entry], descending: bool) -> list[Entry]:
    """The merged sets in walk order: by score, then queue, then member (all reversed when
    descending)."""
    return sorted(model, key=lambda e: order(e.score, e.part, e.member), reverse=descending)


def _share(ordered: list[Entry], part: str) -> list[Entry]:
    """One queue's set, in walk order."""
    return [e for e in ordered if e.part == part]


def _marks(share: Sequence[Entry], start: int, count: int) -> list[Mark]:
    """What a walk of one queue's set of `count` from rank `start` gives: each entry with
    its exact tie in that set."""
    marks = []
    for rank in range(start, min(start + count, len(share))):
        entry = share[rank]
        first = next(i for i, other in enumerate(share) if other.score == entry.score)
        marks.append(
            Mark(score=entry.score, member=entry.member, tie=rank - first, part=entry.part)
        )
    return marks


def _merged(
    ordered: list[Entry], starts: dict[str, int], count: int, descending: bool
) -> list[Mark]:
    """What the dashboard's merged walk of `count` gives: each queue's walk from its start,
    merged in walk order, the first `count`."""
    walked = [
        m for part, start in starts.items() for m in _marks(_share(ordered, part), start, count)
    ]
    walked.sort(key=lambda m: order(m.score, m.part, m.member), reverse=descending)
    return walked[:count]


def _start(share: list[Entry], resume: Mark, back_off: int, descending: bool) -> int:
    """Where the next batch starts in the set of `resume`'s queue, as the dashboard's cursor
    finds it: right after `resume` at its tie, or `back_off` before that place when it has
    gone."""
    before = [
        e for e in share if (e.score > resume.score if descending else e.score < resume.score)
    ]
    first = len(before)
    at = first + resume.tie
    if at < len(share) and share[at].member == resume.member:
        return at + 1
    return max(first, at - back_off)


def _starts(
    ordered: list[Entry], resume: Mark | None, back_off: int, descending: bool
) -> dict[str, int]:
    """Where the next batch starts in each queue's set: in `resume`'s, by `_start`; in the
    others, past their entries before `resume` in walk order (with its score too, for the
    queues before its queue)."""
    parts = ["", "a", "b"]
    if resume is None:
        return dict.fromkeys(parts, 0)
    starts = {}
    for part in parts:
        share = _share(ordered, part)
        if part == resume.part:
            starts[part] = _start(share, resume, back_off, descending)
            continue
        ahead = part > resume.part if descending else part < resume.part
        starts[part] = sum(
            1 for e in share
            if (e.score > resume.score if descending else e.score < resume.score)
            or (ahead and e.score == resume.score)
        )  # fmt: skip
    return starts


@attrs.frozen(kw_only=True)
class Run:
    """What a model run did: each entry it looked at and each it moved, in order, and its tally."""

    looked: list[bytes]
    moved: list[bytes]
    tally: Tally
    left: list[Entry]


def _run(model: list[Entry], batch: int, descending: bool, losses: Sequence[int]) -> Run:
    """The bulk action over the model set; before the batches numbered in `losses`, someone
    else takes the entry the next batch starts after (the cursor then backs off 3)."""
    ordered = _ordered(model, descending)
    position, looked, moved, tally = Position(), [], [], Tally()
    for step in range(4 * len(model) + 2):  # more steps than it can take
        if step in losses and position.resume is not None:
            ordered = [e for e in ordered if e.member != position.resume.member]
        starts = _starts(ordered, position.resume, 3, descending)
        resume = position.resume
        if resume is not None and resume.member in {e.member for e in ordered}:
            # Its tie is exact: while the entry a batch starts after is there, the batch
            # starts right after it.
            assert _share(ordered, resume.part)[starts[resume.part] - 1].member == resume.member
        walked = _merged(ordered, starts, batch, descending)
        new = fresh(walked, position, descending=descending)
        by_member = {e.member: e for e in ordered}
        out = {m.member for m in new if by_member[m.member].matches and by_member[m.member].movable}
        looked += [m.member for m in new]
        moved += [m.member for m in new if m.member in out]
        tally = tally.plus(Tally(scanned=len(new), done=len(out)))
        ordered = [e for e in ordered if e.member not in out]
        position = advance(
            position, walked, [m.member in out for m in walked], descending=descending
        )
        if len(walked) < batch:
            return Run(looked=looked, moved=moved, tally=tally, left=ordered)
    raise AssertionError("the walk never ended")


@given(entries, st.integers(1, 7), st.booleans())
def test_every_entry_is_looked_at_once_and_every_match_moved_once(
    model: list[Entry], batch: int, descending: bool
) -> None:
    """Batches of any size over any ties (and infinities), within a queue's set and across
    queues, reach the whole set, each entry once; the matches that can move are moved, each
    once, and the rest stay."""
    run = _run(model, batch, descending, losses=())
    assert sorted(run.looked) == sorted(e.member for e in model)
    assert sorted(run.moved) == sorted(e.member for e in model if e.matches and e.movable)
    assert run.tally == Tally(scanned=len(model), done=len(run.moved))
    assert {e.member for e in run.left} == {
        e.member for e in model if not (e.matches and e.movable)
    }


@given(entries, st.integers(1, 7), st.booleans(), st.sets(st.integers(0, 30), max_size=5))
def test_an_entry_taken_by_someone_else_makes_a_batch_start_early_never_twice(
    model: list[Entry], batch: int, descending: bool, losses: set[int]
) -> None:
    """When the entry a batch starts after has gone, the batch starts a little before: the
    entries seen again are not new, so none is looked at or moved twice, and none is missed."""
    run = _run(model, batch, descending, losses=tuple(losses))
    assert sorted(run.looked) == sorted(e.member for e in model)
    assert len(run.moved) == len(set(run.moved))
    assert set(run.moved) == {e.member for e in model if e.matches and e.movable}


@given(st.lists(st.tuples(SCORES, PARTS, st.binary(max_size=3)), min_size=2, max_size=8,
                unique=True), st.booleans())  # fmt: skip
def test_past_is_the_walk_order(triples: list[tuple[float, str, bytes]], descending: bool) -> None:
    """`is_past` agrees with the order the merged sets are walked in: score, then queue, then
    member (within a queue's set, the order Redis keeps)."""
    ordered = sorted(triples, reverse=descending)
    marks = [Mark(score=score, member=member, tie=0, part=part) for score, part, member in ordered]
    for index, mark in enumerate(marks):
        assert [is_past(other, mark, descending=descending) for other in marks] == [
            later > index for later in range(len(marks))
        ]
    assert all(is_past(mark, None, descending=descending) for mark in marks)


def test_an_empty_batch_changes_nothing() -> None:
    """A walk that found nothing leaves the action where it was."""
    position = Position(resume=Mark(score=1.0, member=b"a", tie=4))
    assert advance(position, [], [], descending=False) is position
