"""Properties of a tracked job's status: each transition and a job's whole life."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.status import (
    DEFAULT_EXPIRY,
    STATUSES,
    TERMINAL,
    Dropped,
    Enqueued,
    Event,
    Failed,
    FailedOutcome,
    Started,
    Status,
    Succeeded,
    failed_status,
    is_terminal,
    next_status,
    status_of,
)
from tests.domain.strategies import (
    status_events,
    statuses,
)

#: How one attempt of a job that may run again ends (it is put back on its queue after).
retried = st.just(Failed(outcome="retrying"))
#: How the last attempt of a job ends.
endings: st.SearchStrategy[Event] = st.one_of(
    st.builds(Succeeded),
    st.sampled_from([Failed(outcome=o) for o in ("dead", "killed", "discarded")]),
    st.sampled_from([Dropped(reason="cancelled"), Dropped(reason="expired")]),
)


def test_the_statuses_and_their_expiry() -> None:
    """Eight statuses, five of them terminal; a status is kept 30 minutes after its last change."""
    assert STATUSES == (
        "queued", "working", "retrying", "complete", "dead", "discarded", "cancelled", "expired"
    )  # fmt: skip
    assert frozenset({"complete", "dead", "discarded", "cancelled", "expired"}) == TERMINAL
    assert DEFAULT_EXPIRY == 1800


@given(st.none() | statuses, status_events)
def test_any_event_from_any_status_gives_a_status(current: Status | None, event: Event) -> None:
    """The transition is total: whatever was recorded (or nothing), an event gives a status."""
    assert next_status(current, event) in STATUSES


@given(st.none() | statuses, status_events)
def test_terminal_only_by_an_ending(current: Status | None, event: Event) -> None:
    """Only an ending (success, failure, cancel, expiry) reaches a terminal status; enqueue and
    start never do."""
    if is_terminal(next_status(current, event)):
        assert isinstance(event, Succeeded | Failed | Dropped)


@given(st.none() | statuses)
def test_a_start_is_working(current: Status | None) -> None:
    """Starting an attempt is `working`, whatever came before (a rerun after a crash too)."""
    assert next_status(current, Started()) == "working"


@given(st.none() | statuses)
def test_success_is_complete(current: Status | None) -> None:
    """A returned `perform` is `complete`."""
    assert next_status(current, Succeeded()) == "complete"


@given(st.none() | statuses.filter(lambda status: status != "retrying"))
def test_an_enqueue_is_queued(current: Status | None) -> None:
    """Put on its queue, a job is `queued`, a dead one put back by hand too."""
    assert next_status(current, Enqueued()) == "queued"


def test_a_retry_back_on_its_queue_is_still_retrying() -> None:
    """A retrying job moved back to its queue by the poller stays `retrying` until it starts."""
    assert next_status("retrying", Enqueued()) == "retrying"


@pytest.mark.parametrize(
    ("outcome", "status"),
    [("retrying", "retrying"), ("dead", "dead"), ("killed", "dead"), ("discarded", "discarded")],
)
def test_failure_table(outcome: FailedOutcome, status: Status) -> None:
    """A failed attempt's outcome gives its status; a killed job is dead."""
    assert failed_status(outcome) == status
    assert next_status("working", Failed(outcome=outcome)) == status


@given(st.none() | statuses, st.sampled_from(["cancelled", "expired"]))
def test_a_cancel_or_an_expiry_ends_the_job_under_its_own_name(
    current: Status | None, reason: Literal["cancelled", "expired"]
) -> None:
    """Cancelled or expired from any status (waiting, retrying, working): that status, terminal."""
    status = next_status(current, Dropped(reason=reason))
    assert status == reason
    assert is_terminal(status)


@given(st.lists(retried, max_size=5), st.booleans(), endings)
def test_a_jobs_whole_life(retries: list[Failed], polled: bool, ending: Event) -> None:
    """queued -> working (-> retrying -> working)* -> an ending: terminal only at the end."""
    status = next_status(None, Enqueued())
    assert status == "queued"
    for failure in retries:
        status = next_status(next_status(status, Started()), failure)
        assert status == "retrying"
        if polled:
            status = next_status(status, Enqueued())
            assert status == "retrying"
    status = next_status(status, Started())
    assert status == "working"
    assert is_terminal(next_status(status, ending))


@given(statuses)
def test_a_status_reads_back(status: Status) -> None:
    """The text stored in the status hash reads back as that status."""
    assert status_of(status) == status


@given(st.text(max_size=12).filter(lambda text: text not in STATUSES))
def test_other_text_is_no_status(text: str) -> None:
    """Anything else in the hash is no status at all."""
    assert status_of(text) is None
