"""Properties of the failure decision: retry, dead or discard (what each then writes is
tests/domain/test_settlement.py's)."""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.failure import (
    DISCARD,
    KILL,
    LONG_DELAY,
    NO_HOOK,
    Dead,
    Decided,
    Discard,
    FailureDecision,
    HookAnswer,
    HookRaised,
    HookReturned,
    Retry,
    Verdict,
    as_delay,
    decide,
    hook_is_consulted,
    retry_delay,
)
from cogworker.domain.job import ErrorRecord, JobRecord
from cogworker.domain.retries import LONGEST_DELAY, default_backoff
from tests.domain.strategies import (
    error_records,
    hook_answers,
    invalid_hook_values,
    job_records,
    jobs_on_last_failure,
    jobs_with_retries_left,
    valid_delays,
)

jitters = st.floats(min_value=0, max_value=29.999, allow_nan=False)
retry_numbers = st.integers(min_value=1, max_value=100)

decisions: st.SearchStrategy[FailureDecision] = st.one_of(
    st.builds(Retry, delay=st.none() | st.floats(min_value=0, max_value=1e9)),
    st.builds(Dead, killed=st.booleans()),
    st.builds(Discard),
)


@given(job_records(), hook_answers)
def test_every_input_gives_exactly_one_decision(job: JobRecord, answer: HookAnswer) -> None:
    """`decide` is total: any job and any answer give one Retry, Dead or Discard."""
    decided = decide(job, answer)
    kinds = [isinstance(decided.decision, kind) for kind in (Retry, Dead, Discard)]
    assert kinds.count(True) == 1


#: Delays up to "park it" idioms (1e300, sys.maxsize), past what Redis can hold.
any_delays = st.one_of(
    valid_delays,
    st.floats(min_value=1e12, max_value=1e308),
    st.integers(min_value=10**12, max_value=sys.maxsize),
)


@given(jobs_with_retries_left(), any_delays, jitters, retry_numbers)
def test_a_valid_delay_is_used_exactly_without_jitter_up_to_the_cap(
    job: JobRecord, value: float, jitter: float, count: int
) -> None:
    """An int or float >= 0 the hook returns is the delay, whatever the jitter, capped at
    LONGEST_DELAY (what Redis can still add to its clock)."""
    decision = decide(job, HookReturned(value=value)).decision
    assert decision == Retry(delay=min(float(value), LONGEST_DELAY))
    assert retry_delay(decision, count, jitter) == min(float(value), LONGEST_DELAY)


@given(jobs_with_retries_left(), any_delays)
def test_only_a_delay_over_a_year_is_warned_about(job: JobRecord, value: float) -> None:
    """A delay over a year comes with a warning saying whether it is used as given or capped."""
    note = decide(job, HookReturned(value=value)).note
    if value > LONG_DELAY:
        assert note is not None
        assert note.level == "warning"
        assert "over a year" in note.text
        used = "using it as given" if value <= LONGEST_DELAY else "capped at"
        assert used in note.text
        assert job.jid in note.text
    else:
        assert note is None


@given(retry_numbers, jitters)
def test_the_default_backoff_is_capped_too(count: int, jitter: float) -> None:
    """However many retries, the default backoff stays within LONGEST_DELAY."""
    assert 0 <= retry_delay(Retry(), count, jitter) <= LONGEST_DELAY


@given(jobs_with_retries_left(), invalid_hook_values)
def test_an_invalid_value_gives_the_default_with_a_warning(job: JobRecord, value: object) -> None:
    """Anything but a delay, None, KILL or DISCARD means the default backoff, and a warning."""
    decided = decide(job, HookReturned(value=value))
    assert decided.decision == Retry(delay=None)
    assert decided.note is not None
    assert decided.note.level == "warning"
    assert job.class_name in decided.note.text
    assert f"jid={job.jid}" in decided.note.text


@pytest.mark.parametrize("value", [-1, -0.5, math.nan, math.inf, "30", [30], True])
def test_the_warning_names_the_invalid_value(value: object) -> None:
    """The warning quotes what the hook returned, so the user can find the mistake."""
    job = JobRecord(class_name="app.SendEvent", queue="default", jid="abc123")
    note = decide(job, HookReturned(value=value)).note
    assert note is not None
    assert repr(value) in note.text
    assert "app.SendEvent" in note.text
    assert "jid=abc123" in note.text


@given(jobs_with_retries_left(), st.booleans())
def test_a_bool_is_never_a_delay(job: JobRecord, value: bool) -> None:
    """True and False are ints to Python, but never seconds to cogworker."""
    assert as_delay(value) is None
    decided = decide(job, HookReturned(value=value))
    assert decided.decision == Retry(delay=None)
    assert decided.note is not None


@given(jobs_with_retries_left())
def test_none_means_the_default_backoff_quietly(job: JobRecord) -> None:
    """A hook returning None asks for the default backoff, with nothing to log."""
    assert decide(job, HookReturned(value=None)) == Decided(decision=Retry(delay=None))


@given(jobs_with_retries_left(), error_records)
def test_a_raising_hook_gives_the_default_with_an_error(job: JobRecord, error: ErrorRecord) -> None:
    """A hook that raised means the default backoff, and an error naming the exception."""
    decided = decide(job, HookRaised(error=error))
    assert decided.decision == Retry(delay=None)
    assert decided.note is not None
    assert decided.note.level == "error"
    assert f"{error.class_name}: {error.message}" in decided.note.text
    assert f"jid={job.jid}" in decided.note.text


@given(jobs_with_retries_left())
def test_without_a_hook_the_budget_decides_retry(job: JobRecord) -> None:
    """A job with retries left and no hook is retried after the default backoff."""
    assert hook_is_consulted(job, has_hook=True)
    assert not hook_is_consulted(job, has_hook=False)
    assert decide(job, NO_HOOK) == Decided(decision=Retry(delay=None))


@given(jobs_on_last_failure(), hook_answers)
def test_the_last_failure_never_consults_the_hook(job: JobRecord, answer: HookAnswer) -> None:
    """A failure that is the last one anyway is dead, unhooked, whatever the answer."""
    assert not hook_is_consulted(job, has_hook=True)
    assert decide(job, answer) == Decided(decision=Dead(killed=False))


@given(jobs_with_retries_left())
def test_kill_sends_the_job_to_dead_as_killed(job: JobRecord) -> None:
    """KILL ends the job in dead with retries left, and the attempts log says "killed"."""
    decision = decide(job, HookReturned(value=KILL)).decision
    assert decision == Dead(killed=True)


@given(jobs_with_retries_left())
def test_discard_drops_the_job(job: JobRecord) -> None:
    """DISCARD drops the job, and the attempts log says "discarded"."""
    decision = decide(job, HookReturned(value=DISCARD)).decision
    assert decision == Discard()


@given(retry_numbers, jitters)
def test_without_a_hook_delay_the_default_backoff_applies(count: int, jitter: float) -> None:
    """A Retry with no delay of its own waits the default backoff for that retry."""
    assert retry_delay(Retry(), count, jitter) == default_backoff(count, jitter)


def test_the_verdicts_read_as_their_public_names() -> None:
    """KILL and DISCARD show as `cogworker.KILL` and `cogworker.DISCARD` in a log or a REPL."""
    assert repr(KILL) == "cogworker.KILL"
    assert repr(DISCARD) == "cogworker.DISCARD"
    assert list(Verdict) == [KILL, DISCARD]


def test_a_hook_value_with_a_broken_repr_still_gets_a_warning() -> None:
    """A value whose repr raises is described by its type instead."""

    class Weird:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

    job = JobRecord(class_name="app.Job", queue="default", jid="j1")
    note = decide(job, HookReturned(value=Weird())).note
    assert note is not None
    assert "Weird object" in note.text


def test_an_int_too_big_for_a_float_is_no_delay() -> None:
    """An int past the float range can't be a time: the default backoff, with a warning."""
    job = JobRecord(class_name="app.Job", queue="default", jid="j1")
    decided = decide(job, HookReturned(value=10**400))
    assert decided.decision == Retry(delay=None)
    assert decided.note is not None


def test_a_huge_value_is_quoted_shortened() -> None:
    """A long value is cut in the warning, so one bad hook can't flood the log."""
    job = JobRecord(class_name="app.Job", queue="default", jid="j1")
    note = decide(job, HookReturned(value="x" * 10_000)).note
    assert note is not None
    assert len(note.text) < 500
