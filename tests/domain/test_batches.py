"""Batch bookkeeping: when a batch is complete, when it succeeded, which callbacks are due."""

from __future__ import annotations

from collections import Counter

import attrs
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import batches
from cogworker.domain.batches import BatchStatus

finals = st.sampled_from(batches.FINALS)
callback_sets = st.frozensets(st.sampled_from(batches.CALLBACKS))


@st.composite
def statuses(draw: st.DrawFn) -> BatchStatus:
    """Any status a batch's hash can hold: settled never above the members."""
    total = draw(st.integers(0, 50))
    outcomes = draw(st.lists(finals, max_size=total))
    callbacks = draw(callback_sets)
    return BatchStatus(
        bid="b1",
        total=total,
        closed=draw(st.booleans()),
        finals=dict(Counter(outcomes)),
        callbacks=callbacks,
        fired=draw(st.frozensets(st.sampled_from(sorted(callbacks)))) if callbacks else frozenset(),
    )


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, list[tuple[int, batches.Final | None]]]:
    """A batch of `n` members and its events in any order, repeated at will (a member's
    later outcomes after its first final are duplicates or re-runs); None is the close."""
    n = draw(st.integers(0, 12))
    events: list[tuple[int, batches.Final | None]] = [(i, draw(finals)) for i in range(n)]
    events.append((-1, None))
    repeats = draw(st.lists(st.sampled_from(events), max_size=10))
    return n, draw(st.permutations(events + repeats))


def _fold(
    status: BatchStatus, seen: set[int], member: int, final: batches.Final | None
) -> BatchStatus:
    """What batch_fold.lua does with one event (the model the script is checked against)."""
    if final is None:
        return status if status.closed else attrs.evolve(status, closed=True)
    if member in seen:
        return status
    seen.add(member)
    return attrs.evolve(status, finals={**status.finals, final: status.finals.get(final, 0) + 1})


@given(histories(), callback_sets)
def test_each_callback_fires_once_whatever_the_order_of_events(
    history: tuple[int, list[tuple[int, batches.Final | None]]],
    callbacks: frozenset[batches.Callback],
) -> None:
    """Folding events in any order, with repeats, and firing what is due after each,
    fires on_complete exactly once and on_success once exactly when every member succeeded."""
    n, events = history
    status = BatchStatus(bid="b1", total=n, callbacks=callbacks)
    seen: set[int] = set()
    fired: list[batches.Callback] = []
    first_finals: dict[int, batches.Final] = {}
    for member, final in events:
        if final is not None:
            first_finals.setdefault(member, final)
        status = _fold(status, seen, member, final)
        for callback in batches.due_callbacks(status):
            fired.append(callback)
            status = status.with_fired(callback)
    assert batches.is_finished(status)
    succeeded = all(f == "ack" for f in first_finals.values())
    expected = {"complete"} & callbacks | ({"success"} & callbacks if succeeded else set())
    assert sorted(fired) == sorted(expected)


@given(statuses())
def test_nothing_is_due_before_the_batch_is_closed(status: BatchStatus) -> None:
    """An open batch fires nothing, whatever its members did."""
    open_batch = attrs.evolve(status, closed=False)
    assert batches.due_callbacks(open_batch) == ()
    assert batches.status_word(open_batch) == "open"


@given(statuses(), finals)
def test_a_due_callback_stays_due_as_events_come(status: BatchStatus, final: batches.Final) -> None:
    """Monotone: a callback due (not yet fired) is still due after more members settle or the
    batch closes, so a decision made on any later snapshot is the same."""
    later = attrs.evolve(status, closed=True)
    if later.settled < later.total:
        later = attrs.evolve(later, finals={**later.finals, final: later.finals.get(final, 0) + 1})
    assert set(batches.due_callbacks(status)) <= set(batches.due_callbacks(later))


@given(statuses())
def test_the_counts_add_up(status: BatchStatus) -> None:
    """Pending, succeeded and failed make the members; success implies complete."""
    assert status.pending + status.succeeded + status.failed == max(status.total, status.settled)
    assert not status.success or status.complete
    assert status.complete == (status.closed and status.pending == 0)


@given(statuses())
def test_a_status_reads_back_from_its_hash(status: BatchStatus) -> None:
    """The fields batch_fold.lua returns give the status back."""
    fields = {
        "created_at": "0",
        "closed": "1" if status.closed else "0",
        "total": str(status.total),
    }
    fields |= {f"f:{f}": str(n) for f, n in status.finals.items()}
    fields |= {f"cb:{c}": "{}" for c in status.callbacks}
    fields |= {f"fired:{c}": "1" for c in status.fired}
    assert BatchStatus.from_fields("b1", fields) == status


@given(st.text("abcdef0123456789", min_size=1), st.text("abc-_.:019", min_size=1), finals)
def test_an_event_reads_back(bid: str, jid: str, final: batches.Final) -> None:
    """What a settlement appends parses to the same batch, member and outcome."""
    assert batches.parse_event(batches.event(bid, jid, final)) == batches.BatchEvent(
        bid=bid, jid=jid, final=final
    )
    closing = batches.parse_event(batches.event(bid, "-", "close"))
    assert closing == batches.BatchEvent(bid=bid, jid="-", final="close")


def test_text_that_is_no_event_is_refused() -> None:
    """Hand-written text isn't taken for an event."""
    for text in ("", "b1 j1", "b1 j1 retry", " j1 ack", "b1 j1 ack extra"):
        assert batches.parse_event(text) is None


def test_the_status_words() -> None:
    """open, running, succeeded, complete (with a failure)."""
    running = BatchStatus(total=2, closed=True, finals={"ack": 1})
    assert batches.status_word(running) == "running"
    assert batches.status_word(attrs.evolve(running, finals={"ack": 2})) == "succeeded"
    assert batches.status_word(attrs.evolve(running, finals={"ack": 1, "dead": 1})) == "complete"
    assert batches.callback_jid("b1", "success") == "b1-success"
