"""Properties of time limits on running jobs: which runs are overdue soft (at the limit)
and hard (still running `grace` after being told), and when the next deadline falls."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import deadlines
from cogworker.domain.deadlines import LimitedRun

starts = st.floats(min_value=0, max_value=1e6, allow_nan=False)
limits = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False)
graces = st.floats(min_value=1e-3, max_value=100, allow_nan=False)


@st.composite
def looks(draw: st.DrawFn) -> tuple[list[LimitedRun], dict[str, float], float]:
    """Running jobs (distinct jids), when some were told, and the time of the look."""
    count = draw(st.integers(min_value=0, max_value=8))
    runs = [
        LimitedRun(runner=f"p{n}", jid=f"j{n}", started_at=draw(starts), timeout=draw(limits))
        for n in range(count)
    ]
    told = {
        run.jid: run.soft_deadline + draw(st.floats(min_value=0, max_value=100))
        for run in runs
        if draw(st.booleans())
    }
    return runs, told, draw(st.floats(min_value=0, max_value=2e6))


@given(looks(), graces)
def test_a_run_is_overdue_at_most_one_way(
    look: tuple[list[LimitedRun], dict[str, float], float], grace: float
) -> None:
    """Soft: past its limit, not told yet.  Hard: told, and `grace` has passed since.  No
    run is both, and every other run is neither."""
    runs, told, now = look
    found = deadlines.overdue(runs, told, grace=grace, now=now)
    for run in runs:
        soft = run.jid not in told and now >= run.soft_deadline
        hard = run.jid in told and now >= told[run.jid] + grace
        assert (run in found.soft, run in found.hard) == (soft, hard)


@given(looks(), graces)
def test_a_run_is_never_abandoned_before_it_was_told(
    look: tuple[list[LimitedRun], dict[str, float], float], grace: float
) -> None:
    """However late the look (a starved watchdog), an untold run is told first: the hard
    step never skips the soft one."""
    runs, told, now = look
    found = deadlines.overdue(runs, told, grace=grace, now=now)
    assert all(run.jid in told for run in found.hard)
    assert all(run.jid not in told for run in found.soft)


@given(looks(), graces)
def test_nothing_is_due_before_the_next_deadline(
    look: tuple[list[LimitedRun], dict[str, float], float], grace: float
) -> None:
    """Just before the next deadline nothing is overdue; at it, something is."""
    runs, told, _ = look
    due = deadlines.next_deadline(runs, told, grace=grace)
    if due is None:
        assert runs == []
        return
    at_due = deadlines.overdue(runs, told, grace=grace, now=due)
    assert at_due.soft or at_due.hard
    before = deadlines.overdue(runs, told, grace=grace, now=due - 1e-3 * max(1.0, abs(due)))
    assert before == deadlines.Overdue()


@given(st.none() | limits, st.none() | limits)
def test_a_class_limit_overrides_the_default(own: float | None, default: float | None) -> None:
    """The class's `timeout`, else `Config.default_timeout`, else none."""
    assert deadlines.limit_of(own, default) == (own if own is not None else default)
