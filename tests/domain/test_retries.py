"""Properties of the retry budget, the default backoff and the terminal check."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.job import JobRecord
from cogworker.domain.retries import (
    DEFAULT_MAX_RETRIES,
    JITTER_SPAN,
    default_backoff,
    is_last_failure,
    max_retries,
)
from tests.domain.strategies import job_records

jitters = st.floats(min_value=0, max_value=JITTER_SPAN, exclude_max=True, allow_nan=False)
retry_numbers = st.integers(min_value=1, max_value=1000)


@pytest.mark.parametrize(
    ("retry", "budget"),
    [(True, DEFAULT_MAX_RETRIES), (False, 0), (0, 0), (1, 1), (10, 10), (25, 25), (100, 100)],
)
def test_budget_table(retry: bool | int, budget: int) -> None:
    """`True` gives 25 retries, an int n gives n, `False` and `0` give none."""
    assert max_retries(retry) == budget


@given(st.integers(min_value=0))
def test_an_int_is_its_own_budget(retry: int) -> None:
    """Any int n >= 0 allows exactly n retries."""
    assert max_retries(retry) == retry


@given(st.integers(max_value=-1))
def test_a_negative_budget_is_none(retry: int) -> None:
    """A negative `retry` allows no retry at all rather than something odd."""
    assert max_retries(retry) == 0


def test_the_default_budget_is_25() -> None:
    """The spec's default: 25 retries for `retry=True` or unset."""
    assert DEFAULT_MAX_RETRIES == 25
    assert JobRecord(class_name="A", queue="q", jid="j").retry is True


@given(retry_numbers, jitters)
def test_backoff_formula(count: int, jitter: float) -> None:
    """The default backoff is count**4 + 15 + jitter * (count + 1)."""
    assert default_backoff(count, jitter) == pytest.approx(count**4 + 15 + jitter * (count + 1))


@given(retry_numbers, jitters)
def test_backoff_bounds(count: int, jitter: float) -> None:
    """With jitter in [0, 30), the backoff is count**4 + 15 plus up to 30 s per count + 1."""
    low = count**4 + 15
    # At most (not below) the top: a jitter just under 30 may round up to it.
    assert low <= default_backoff(count, jitter) <= low + JITTER_SPAN * (count + 1)


@given(retry_numbers, jitters)
def test_backoff_grows_with_the_count(count: int, jitter: float) -> None:
    """For the same jitter, each retry waits longer than the one before."""
    assert default_backoff(count + 1, jitter) > default_backoff(count, jitter)


@given(retry_numbers)
def test_backoff_bounds_grow_with_the_count(count: int) -> None:
    """The lowest and the highest possible backoff both grow with the count."""
    top = float(JITTER_SPAN)
    assert default_backoff(count + 1, 0.0) > default_backoff(count, 0.0)
    assert default_backoff(count + 1, top) > default_backoff(count, top)


def test_first_retry_waits_at_least_16_seconds() -> None:
    """The first retry waits 16 s plus up to a minute of jitter."""
    assert default_backoff(1, 0.0) == 16.0
    assert default_backoff(1, 29.0) == 16.0 + 58.0


@given(job_records())
def test_last_failure_is_when_the_budget_is_used_up(job: JobRecord) -> None:
    """A failure is the last one exactly when the retries made reach the budget."""
    assert is_last_failure(job) == (job.retries_made >= max_retries(job.retry))


@given(job_records(retry=st.sampled_from([False, 0])))
def test_no_retries_means_every_failure_is_the_last(job: JobRecord) -> None:
    """With `retry=False` or `0`, even the first failure is the last one."""
    assert is_last_failure(attrs.evolve(job, retry_count=None))
