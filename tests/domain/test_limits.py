"""Properties of time limits and expiry: which seconds are accepted, and when a job expires."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cogworker.domain.job import JobRecord
from cogworker.domain.limits import checked_seconds, expiry_of, is_expired

NOW = 1_800_000_000.0
JOB = JobRecord(class_name="app.Send", queue="q", jid="j1")


@given(st.floats(min_value=1e-9, max_value=1e12) | st.integers(min_value=1, max_value=10**12))
def test_a_positive_finite_number_of_seconds_is_taken(value: float) -> None:
    """Any positive, finite number is a limit, as a float."""
    assert checked_seconds("timeout", value) == float(value)


@pytest.mark.parametrize(
    "value", [0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf, "10", None, True, [1]]
)
def test_anything_else_is_refused_naming_the_value(value: object) -> None:
    """Zero, negative, NaN, infinite, bool or non-numeric: a ValueError naming the value."""
    with pytest.raises(ValueError, match="timeout") as refused:
        checked_seconds("timeout", value)
    assert repr(value) in str(refused.value)


@given(st.floats(min_value=1e-3, max_value=1e9), st.floats(min_value=0, max_value=4e9))
@example(1.0, 0.0)
def test_expiry_is_in_seconds_from_now_or_at_a_time(seconds: float, at: float) -> None:
    """expires_in counts from now; expires_at is taken as given; neither is no expiry."""
    assert expiry_of(NOW, expires_in=seconds) == NOW + seconds
    assert expiry_of(NOW, expires_at=at) == at
    assert expiry_of(NOW) is None


@pytest.mark.parametrize(
    ("expires_in", "expires_at"), [(10, NOW), (None, math.nan), (None, "soon"), (-1, None)]
)
def test_a_bad_expiry_is_refused(expires_in: object, expires_at: object) -> None:
    """Both at once, or a value that isn't a positive time, is a ValueError."""
    with pytest.raises(ValueError, match="expires"):
        expiry_of(NOW, expires_in=expires_in, expires_at=expires_at)


@given(st.none() | st.floats(min_value=0, max_value=4e9), st.floats(min_value=0, max_value=4e9))
def test_a_job_is_expired_from_its_expiry_on(expires_at: float | None, at: float) -> None:
    """No expiry: never; else from `expires_at` on, not a moment before."""
    job = JobRecord(class_name="app.Send", queue="q", jid="j1", expires_at=expires_at)
    assert is_expired(job, at) == (expires_at is not None and at >= expires_at)
