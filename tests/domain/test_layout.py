"""The key layout's decisions: what a process does given the layout number Redis holds and
the old keys found, which steps a migration applies, and whom it waits for."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import layout, layout_verdicts
from cogworker.domain.layout import Step
from cogworker.domain.layout_moves import RenameMatching
from cogworker.domain.layout_verdicts import Fresh, Newer, Outdated, Ready
from tests.domain.strategies import clock_times, layout_steps

numbers = st.integers(min_value=0, max_value=8)


@given(steps=layout_steps(), data=st.data())
def test_without_a_number_only_old_keys_make_a_redis_outdated(
    steps: tuple[Step, ...], data: st.DataObject
) -> None:
    """No number stored: a Redis holding any key a step moves away from is refused as layout
    0; one holding none of them is fresh and gets this code's number."""
    olds = layout.old_names(steps)
    found = data.draw(st.sets(st.sampled_from(olds)) if olds else st.just(set[str]()))
    unrelated = {"cogworker:queues", *(rename.new for step in steps for rename in step.renames)}

    decided = layout_verdicts.verdict(None, found | unrelated, steps)

    if found:
        assert decided == Outdated(stored=0, current=layout.current(steps))
    else:
        assert decided == Fresh(number=layout.current(steps))


@given(steps=layout_steps(), stored=numbers)
def test_a_stored_number_is_compared_with_the_codes(steps: tuple[Step, ...], stored: int) -> None:
    """A stored number equal to the code's is ready, lower outdated, higher newer; the keys
    found no longer matter."""
    latest = layout.current(steps)

    decided = layout_verdicts.verdict(stored, layout.old_names(steps), steps)

    if stored == latest:
        assert decided == Ready()
    elif stored < latest:
        assert decided == Outdated(stored=stored, current=latest)
    else:
        assert decided == Newer(stored=stored, current=latest)


@given(steps=layout_steps(), stored=numbers)
def test_pending_steps_are_those_after_the_stored_number_in_order(
    steps: tuple[Step, ...], stored: int
) -> None:
    """A migration from `stored` applies every later step once, in order, and none before."""
    numbers_left = [step.number for step in layout.pending(stored, steps)]
    assert numbers_left == list(range(stored + 1, layout.current(steps) + 1))


@given(steps=layout_steps(), stored=numbers, data=st.data())
def test_a_plan_moves_every_key_of_pending_steps_and_the_old_keys_found_again(
    steps: tuple[Step, ...], stored: int, data: st.DataObject
) -> None:
    """In step order: a pending step with all its renames, rewrites and splits; an applied
    one only with the renames and splits whose old key is found again, and only if there is
    one, and none of its rewrites (a record written since names its locks where its writer
    took them)."""
    olds = layout.old_names(steps)
    found = data.draw(st.sets(st.sampled_from(olds)) if olds else st.just(set[str]()))

    planned = layout.plan(stored, found, steps)

    assert [each.step.number for each in planned] == sorted({e.step.number for e in planned})
    by_number = {each.step.number: each for each in planned}
    for step in steps:
        if step.number > stored:
            assert by_number[step.number].renames == step.renames
            assert by_number[step.number].rewrites == step.rewrites
            assert by_number[step.number].splits == step.splits
        else:
            again = tuple(rename for rename in step.renames if rename.old in found)
            split_again = tuple(split for split in step.splits if split.old in found)
            assert by_number.get(step.number) == (
                layout.Planned(step=step, renames=again, splits=split_again)
                if again or split_again
                else None
            )


def test_the_steps_are_numbered_by_their_place_and_rename_each_key_once() -> None:
    """The code's own steps: numbered 1, 2, ..., no key renamed twice, none to a name a
    step moves away from."""
    assert [step.number for step in layout.STEPS] == list(range(1, len(layout.STEPS) + 1))
    olds = layout.old_names(layout.STEPS)
    news = [rename.new for step in layout.STEPS for rename in step.renames]
    assert len(set(olds)) == len(olds)
    assert not set(olds) & set(news)


def test_the_refusals_name_their_cure() -> None:
    """An outdated Redis names the command that migrates it; a newer one, an upgrade."""
    assert "`cogworker migrate`" in Outdated(stored=0, current=1).problem
    assert "upgrade cogworker" in Newer(stored=2, current=1).problem


@given(
    beats=st.dictionaries(st.text(max_size=8), st.none() | clock_times),
    now=clock_times,
    threshold=st.floats(min_value=0.1, max_value=600),
)
def test_still_beating_are_the_processes_with_a_beat_younger_than_the_threshold(
    beats: dict[str, float | None], now: float, threshold: float
) -> None:
    """A migration waits for exactly the processes that beat within the threshold."""
    running = layout_verdicts.still_beating(beats, now, threshold)

    assert running == sorted(running)
    for identity, beat in beats.items():
        assert (identity in running) == (beat is not None and now - beat < threshold)


#: A family as a layout step names one: a queue's list, under its queue's hash tag.
QUEUES = RenameMatching(old="cogworker:queue:*", new="cogworker:{q:*}:queue")
queue_names = st.text(min_size=1, max_size=12)


@given(names=st.sets(queue_names, max_size=5), stored=st.sampled_from([0, 1]))
def test_a_family_moves_each_member_found_keeping_what_varies(names: set[str], stored: int) -> None:
    """A family's members are the keys found that match it, pending step or applied: each
    goes to the new name with the same varying text; keys it doesn't match stay put."""
    step = Step(number=1, summary="queues", renames=(), families=(QUEUES,))
    found = {f"cogworker:queue:{name}" for name in names} | {"cogworker:queues", "x:queue:a"}

    planned = layout.plan(stored, found, (step,))

    moves = {rename.old: rename.new for each in planned for rename in each.renames}
    assert moves == {f"cogworker:queue:{n}": f"cogworker:{{q:{n}}}:queue" for n in names}
    decided = layout_verdicts.verdict(None, found, (step,))
    assert decided == (Outdated(stored=0, current=1) if names else Fresh(number=1))


@given(name=st.text(max_size=20))
def test_a_family_matches_exactly_the_names_its_rename_can_read(name: str) -> None:
    """A name matches the family only when it has the old name's fixed head and tail; its
    rename then gives back the varying text."""
    if QUEUES.matches(name):
        assert (
            QUEUES.rename(name).new == "cogworker:{q:" + name[len("cogworker:queue:") :] + "}:queue"
        )
    else:
        assert not name.startswith("cogworker:queue:")


def test_a_family_names_its_varying_parts_alike_on_both_sides() -> None:
    """A family whose names hold no `*`, or not as many in the new name as in the old, is
    refused when it is written."""
    with pytest.raises(ValueError, match="must hold a"):
        RenameMatching(old="cogworker:queue:x", new="cogworker:{q:*}:queue")
    with pytest.raises(ValueError, match="as many"):
        RenameMatching(old="cogworker:queue:*:*", new="cogworker:{q:*}:queue")


#: What the release before step 2 named a batch callback's marker: in the slot of its
#: queue's list, `cogworker:queue:Q` (written out here: it is what a deployment holds).
def _old_marker(queue: str, jid: str) -> str:
    key = "cogworker:queue:" + queue
    start = key.find("{")
    tagged = start != -1 and key.find("}", start + 1) > start + 1
    return f"{key}:batch_callback:{jid}" if tagged else f"{{{key}}}:batch_callback:{jid}"


#: A batch callback's jid: its batch's id (24 hex digits), then which callback.
callback_jids = st.builds(
    lambda bid, which: f"{bid}-{which}",
    st.text(alphabet="0123456789abcdef", min_size=24, max_size=24),
    st.sampled_from(["success", "complete"]),
)
#: Queue names, with the texts the old names are made of and glob and tag characters.
odd_queue_names = st.lists(
    st.sampled_from(
        [*"ab{}*?[]:\\ ", "}:batch_callback:", ":batch_callback:", "cogworker:queue:", "{q:",
         "}:queue"]
    ),
    min_size=1,
    max_size=6,
).map("".join)  # fmt: skip


def _moves(name: str, kind: str) -> list[str]:
    """Where step 2 moves the key `name` of Redis type `kind`: every rename of it that
    moves a key of that type."""
    step = layout.STEPS[1]
    planned = layout.plan(1, {name}, (*layout.STEPS[:1], step))
    return [r.new for each in planned for r in each.renames if r.kind in (None, kind)]


@given(queue=odd_queue_names | queue_names, jid=callback_jids)
def test_step_two_moves_a_queue_and_its_markers_under_the_queues_tag(queue: str, jid: str) -> None:
    """Whatever the queue's name holds, its list goes to `cogworker:{q:Q}:queue` and each
    callback marker to that name with `:batch_callback:J` after it, by one rename each."""
    assert _moves("cogworker:queue:" + queue, "list") == ["cogworker:{q:" + queue + "}:queue"]
    assert _moves(_old_marker(queue, jid), "string") == [
        "cogworker:{q:" + queue + "}:queue:batch_callback:" + jid
    ]


@given(queue=odd_queue_names | queue_names, jid=callback_jids)
def test_step_two_new_names_are_no_old_ones(queue: str, jid: str) -> None:
    """A migrated Redis holds nothing a step moves away from: its keys are never taken for
    old ones (by the verdict, or by a later run)."""
    new_list = "cogworker:{q:" + queue + "}:queue"
    for name in (new_list, f"{new_list}:batch_callback:{jid}"):
        assert not layout.is_old(name)
