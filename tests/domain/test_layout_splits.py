"""Layout step 8's decision: each entry of an old scheduled, retry or dead set goes to the set
of the queue its payload names, and one naming none (or not JSON) to the empty queue name's;
layout step 10's likewise for each process's old in-progress list."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.layout_splits import IN_PROGRESS_SPLITS, SET_SPLITS, Split, queue_named
from cogworker.domain.queues import name_problem

queue_names = st.text(min_size=1, max_size=20).filter(lambda name: name_problem(name) is None)


@given(queue=queue_names, jid=st.text(max_size=10))
def test_a_payload_goes_to_the_set_of_the_queue_it_names(queue: str, jid: str) -> None:
    """Whatever the name holds (tags, `*`, `}`), the entry's set is its queue's."""
    member = json.dumps({"class": "a.B", "queue": queue, "jid": jid}).encode()
    assert queue_named(member) == queue
    assert [split.target(member) for split in SET_SPLITS] == [
        f"cogworker:{{q:{queue}}}:{name}" for name in ("schedule", "retry", "dead")
    ]


@pytest.mark.parametrize(
    "member",
    [b"\xff\xfe not json", b"[1, 2]", b'{"jid": "x"}', b'{"queue": ""}', b'{"queue": 3}',
     b'{"queue": "a,b"}', b'{"queue": " padded "}', b"{" * 5000],
)  # fmt: skip
def test_an_entry_naming_no_queue_goes_to_the_empty_queue_name_s_set(member: bytes) -> None:
    """Not JSON, not an object, no queue or one no queue can be named: the part every merged
    read looks in."""
    assert queue_named(member) == ""
    assert SET_SPLITS[2].target(member) == "cogworker:{q:}:dead"


def test_a_split_names_a_place_for_the_queue() -> None:
    """The new name must hold a `*`: its first is the queue's."""
    with pytest.raises(ValueError, match="must hold"):
        Split(old="a", new="b")
    assert Split(old="a", new="{q:*}:*").target(b'{"queue": "q"}') == "{q:q}:*"


@given(queue=queue_names, identity=st.text(min_size=1, max_size=30), jid=st.text(max_size=10))
def test_an_in_progress_entry_goes_to_its_process_s_list_of_its_queue(
    queue: str, identity: str, jid: str
) -> None:
    """Layout step 10: the old list of any process (its identity holding tags, `*`, `:`)
    splits to that process's list of the queue each entry names, the queue added to that
    process's set first."""
    (family,) = IN_PROGRESS_SPLITS
    old = "cogworker:inprogress:" + identity
    member = json.dumps({"class": "a.B", "queue": queue, "jid": jid}).encode()

    assert family.matches(old)
    split = family.split(old)
    assert (split.old, split.kind) == (old, "list")
    assert split.target(member) == f"cogworker:{{q:{queue}}}:inprogress:{identity}"
    assert split.owner == f"cogworker:{{p:{identity}}}:queues"
    assert split.target(b"not json") == f"cogworker:{{q:}}:inprogress:{identity}"


@pytest.mark.parametrize(
    "name", ["cogworker:inprogress:", "cogworker:{q:a}:inprogress:p", "cogworker:queue:x"]
)
def test_only_an_old_in_progress_list_is_of_the_family(name: str) -> None:
    """No identity, or a list of the new layout: not one of step 10's old lists."""
    (family,) = IN_PROGRESS_SPLITS
    assert not family.matches(name)
    with pytest.raises(ValueError, match="not named like"):
        family.split(name)
