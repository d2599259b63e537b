"""Properties of a bulk action's way through a set: every entry once, every match acted on once,
and the next batch starting right after the last entry that stayed, however many tie."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.bulk import Mark, Position, Tally, advance, fresh, is_past

#: Scores few enough to tie often, and the infinities Redis allows.
SCORES = st.sampled_from([float("-inf"), 1.0, 2.0, 3.0, float("inf")])


@attrs.frozen(kw_only=True)
class Entry:
    """An entry of the model set: whether the action's filter matches it, and whether the
    action can move it (a match it can't is skipped and stays)."""

    score: float
    member: bytes
    matches: bool
    movable: bool


entries = st.lists(
    st.builds(Entry, score=SCORES, member=st.binary(max_size=3), matches=st.booleans(),
              movable=st.booleans()),
    unique_by=lambda entry: entry.member,
    max_size=60,
)  # fmt: skip


def _ordered(model: list[Entry], descending: bool) -> list[Entry]:
    """The set in walk order: by score, then by member (all reversed when descending)."""
    return sorted(model, key=lambda e: (e.score, e.member), reverse=descending)


def _marks(ordered: Sequence[Entry], start: int, count: int) -> list[Mark]:
    """What a walk of `count` from rank `start` gives: each entry with its exact tie."""
    marks = []
    for rank in range(start, min(start + count, len(ordered))):
        entry = ordered[rank]
        first = next(i for i, other in enumerate(ordered) if other.score == entry.score)
        marks.append(Mark(score=entry.score, member=entry.member, tie=rank - first))
    return marks


def _start(ordered: list[Entry], resume: Mark | None, back_off: int, descending: bool) -> int:
    """Where the next batch starts, as the dashboard's cursor finds it: right after `resume`
    at its tie, or `back_off` before that place when it has gone."""
    if resume is None:
        return 0
    before = [
        e for e in ordered if (e.score > resume.score if descending else e.score < resume.score)
    ]
    first = len(before)
    at = first + resume.tie
    if at < len(ordered) and ordered[at].member == resume.member:
        return at + 1
    return max(first, at - back_off)


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
        start = _start(ordered, position.resume, 3, descending)
        if position.resume is not None and position.resume.member in {e.member for e in ordered}:
            # Its tie is exact: while the entry a batch starts after is there, the batch
            # starts right after it.
            assert ordered[start - 1].member == position.resume.member
        walked = _marks(ordered, start, batch)
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
    """Batches of any size over any ties (and infinities) reach the whole set, each entry
    once; the matches that can move are moved, each once, and the rest stay."""
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


@given(st.lists(st.tuples(SCORES, st.binary(max_size=3)), min_size=2, max_size=8, unique=True),
       st.booleans())  # fmt: skip
def test_past_is_the_walk_order(pairs: list[tuple[float, bytes]], descending: bool) -> None:
    """`is_past` agrees with the order Redis walks a set in: score, then member."""
    ordered = sorted(pairs, reverse=descending)
    marks = [Mark(score=score, member=member, tie=0) for score, member in ordered]
    for index, mark in enumerate(marks):
        assert [is_past(other, mark, descending=descending) for other in marks] == [
            later > index for later in range(len(marks))
        ]
    assert all(is_past(mark, None, descending=descending) for mark in marks)


def test_an_empty_batch_changes_nothing() -> None:
    """A walk that found nothing leaves the action where it was."""
    position = Position(resume=Mark(score=1.0, member=b"a", tie=4))
    assert advance(position, [], [], descending=False) is position
