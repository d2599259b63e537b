"""The supervisor's pure rules: restart backoff and which children to recycle."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.supervision import (
    RESTART_INITIAL,
    RESTART_MAXIMUM,
    STABLE_UPTIME,
    restart_delay,
    to_recycle,
)


@given(
    previous=st.none() | st.floats(0.0, 100.0),
    uptime=st.floats(0.0, 1e6),
)
def test_restart_delay_stays_between_the_first_delay_and_the_ceiling(
    previous: float | None, uptime: float
) -> None:
    """A restart waits between 1 s and 30 s; the first one, and one after a long run, 1 s."""
    delay = restart_delay(previous, uptime)
    assert RESTART_INITIAL <= delay <= RESTART_MAXIMUM
    if previous is None or uptime >= STABLE_UPTIME:
        assert delay == RESTART_INITIAL


def test_restart_delay_doubles_while_children_die_young() -> None:
    """A child dying at start-up again and again is restarted after 1, 2, 4 ... 30, 30 s."""
    delays = [restart_delay(None, 0.1)]
    for _ in range(7):
        delays.append(restart_delay(delays[-1], 0.1))
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert restart_delay(30.0, STABLE_UPTIME) == RESTART_INITIAL


def test_to_recycle_picks_children_above_the_limit_not_yet_stopping() -> None:
    """Above the limit and not already stopping; an unreadable RSS is never a reason."""
    readings = {10: 2048, 11: 1024, 12: 4096, 13: None, 14: 5000}
    assert to_recycle(readings, 1024, stopping=[14]) == [10, 12]
