"""Properties of which classes a reading of per-class metrics covers (`domain.class_cap`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.class_cap import covered, last_runs
from tests.domain.strategies import registries


@given(registries)
def test_a_class_last_ran_when_it_last_ran_on_any_queue(
    found: dict[str, dict[str, float]],
) -> None:
    """Each class's time is the latest of its queues'."""
    latest = last_runs(found)
    assert set(latest) == {name for registry in found.values() for name in registry}
    for registry in found.values():
        for name, at in registry.items():
            assert latest[name] >= at
    assert all(latest[name] in {r[name] for r in found.values() if name in r} for name in latest)


@given(registries, st.integers(min_value=1, max_value=15))
def test_the_classes_that_ran_last_are_covered_and_the_rest_counted(
    found: dict[str, dict[str, float]], limit: int
) -> None:
    """At most `limit` covered, every class either covered or counted, and no class left out
    ran after a covered one (ties by name, the greater first, as Redis orders them)."""
    chosen = covered(found, limit)
    latest = last_runs(found)
    assert len(chosen.names) == min(limit, len(latest))
    assert len(chosen.names) + chosen.left_out == len(latest)
    left = set(latest) - chosen.names
    for name in chosen.names:
        assert all((latest[other], other) < (latest[name], name) for other in left)


def test_a_limit_under_one_is_refused() -> None:
    """A reading covers one class or more: 0 is a ValueError naming it."""
    with pytest.raises(ValueError, match="a reading covers one class or more, not 0"):
        covered({}, 0)
