"""A payload's `unique_ttl` that is no finite number falls back to the default (issue 16 #9)."""

from __future__ import annotations

import math

import pytest

from cogworker.domain import unique


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_payloads_non_finite_ttl_gives_the_default(value: float) -> None:
    """Infinity or NaN (Python's json reads both) never reaches Redis as a TTL."""
    assert unique.ttl_of({"unique_ttl": value}, 42.0) == 42.0
