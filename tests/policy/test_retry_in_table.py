"""Table 1 of the spec ("Custom delay"): what each `retry_in` answer does, on a real worker.

Every row reads the shared run (one worker settled every case of both kinds of job
class, sync and async, see conftest).
"""

from __future__ import annotations

import pytest

from cogworker.exceptions import UnknownJobClassError
from tests.policy import jobs
from tests.policy.helpers import (
    DEAD_KEY,
    RETRY_KEY,
    Observed,
    default_bounds,
    delay_of,
    qualified,
)

BOOM = qualified(jobs.PolicyBoomError)


def retry_entry(run: Observed, case: str) -> tuple[dict[str, object], float]:
    """The case's retry entry and score; fails the test (with context) if it isn't in retry."""
    found = run.entry(RETRY_KEY, run.jids[case])
    assert found is not None, f"{case} is not in retry\n{run.context()}"
    assert run.entry(DEAD_KEY, run.jids[case]) is None, f"{case} is in dead too"
    return found


def asked_once(run: Observed, case: str) -> dict[str, object]:
    """The one `retry_in` call recorded for the case (count 0, the job's own error)."""
    calls = run.records(run.jids[case], "retry_in")
    assert len(calls) == 1, f"{case}: retry_in calls {calls}\n{run.context()}"
    call = calls[0]
    assert call["count"] == 0
    assert call["exc_class"] == BOOM
    assert call["exc_message"] == f"boom: {case}"
    return call


def warnings_about(run: Observed, case: str) -> list[str]:
    """The worker's WARNING/ERROR lines about the case's retry_in."""
    return [
        line
        for line in run.log_lines(run.jids[case])
        if "retry_in of" in line and (" WARNING " in line or " ERROR " in line)
    ]


@pytest.mark.parametrize("case", ["int", "float"])
def test_seconds_are_used_exactly(shared_run: Observed, case: str) -> None:
    """An int or float >= 0 is the retry delay as given: score = failed_at + value, no jitter."""
    entry, score = retry_entry(shared_run, case)
    assert delay_of(entry, score) == pytest.approx(jobs.ANSWERS[case], abs=1e-3)
    assert entry["retry_count"] == 1
    assert entry["error_class"] == BOOM
    assert entry["error_message"] == f"boom: {case}"
    asked_once(shared_run, case)
    assert not warnings_about(shared_run, case)
    assert shared_run.death_hooks(shared_run.jids[case]) == []


def test_zero_means_the_next_poll(shared_run: Observed) -> None:
    """0 retries on the next poll: the job runs again within a second or two, not 16+ s later."""
    jid = shared_run.jids["zero"]
    assert shared_run.rc.sismember(jobs.DONE_KEY, jid), shared_run.context()
    starts = [float(s) for s in shared_run.rc.lrange(f"policy:runs:{jid}", 0, -1)]
    assert len(starts) == 2
    assert starts[1] - starts[0] < 5.0  # the default would be 16 s or more
    asked_once(shared_run, "zero")
    assert shared_run.entry(RETRY_KEY, jid) is None
    assert shared_run.entry(DEAD_KEY, jid) is None


def test_none_gives_the_default_backoff(shared_run: Observed) -> None:
    """None is the default delay: count**4 + 15 plus jitter, with no warning."""
    entry, score = retry_entry(shared_run, "none")
    low, high = default_bounds(1)
    assert low <= delay_of(entry, score) < high
    asked_once(shared_run, "none")
    assert not warnings_about(shared_run, "none")


def test_kill_goes_straight_to_dead_and_runs_the_death_hooks(shared_run: Observed) -> None:
    """KILL files the job in dead with retries left; the class hook, then each handler, runs."""
    jid = shared_run.jids["kill"]
    found = shared_run.entry(DEAD_KEY, jid)
    assert found is not None, shared_run.context()
    entry, _ = found
    assert entry["retry"] is True
    assert entry["retry_count"] == 1
    assert (entry["error_class"], entry["error_message"]) == (BOOM, "boom: kill")
    assert shared_run.entry(RETRY_KEY, jid) is None
    asked_once(shared_run, "kill")
    assert shared_run.death_hooks(jid) == [jobs.CLASS_HOOK, *jobs.HANDLER_NAMES]
    for call in shared_run.records(jid):
        if call["hook"] != "retry_in" and call["hook"] != "mutating_handler":
            assert (call["exc_class"], call["exc_message"]) == (BOOM, "boom: kill")
    assert any("reason=killed" in line for line in shared_run.log_lines(jid))


def test_discard_lands_nowhere_runs_no_hook_and_counts_as_failed(shared_run: Observed) -> None:
    """DISCARD: neither retry nor dead, no death hook, and the failed counter went up."""
    jid = shared_run.jids["discard"]
    assert shared_run.entry(RETRY_KEY, jid) is None
    assert shared_run.entry(DEAD_KEY, jid) is None
    assert shared_run.death_hooks(jid) == []
    asked_once(shared_run, "discard")
    # Counters read when the DISCARD job had run alone: (failed, processed).
    assert shared_run.discard_counters == (1, 1)


@pytest.mark.parametrize(
    ("case", "quoted"),
    [("negative", "-5"), ("nan", "nan"), ("inf", "inf"), ("bool", "True"), ("string", "'soon'")],
)
def test_any_other_value_gives_the_default_with_a_warning(
    shared_run: Observed, case: str, quoted: str
) -> None:
    """A negative, NaN, infinite, bool or string answer: default delay, a warning naming it."""
    entry, score = retry_entry(shared_run, case)
    low, high = default_bounds(1)
    assert low <= delay_of(entry, score) < high
    asked_once(shared_run, case)
    lines = warnings_about(shared_run, case)
    assert len(lines) == 1, f"{case}: {lines}\n{shared_run.context()}"
    assert " WARNING " in lines[0]
    assert f"returned {quoted} for jid={shared_run.jids[case]}" in lines[0]


def test_a_raising_hook_gives_the_default_and_is_logged(shared_run: Observed) -> None:
    """retry_in raising: the default delay, and an ERROR line naming the hook's error."""
    entry, score = retry_entry(shared_run, "raises")
    low, high = default_bounds(1)
    assert low <= delay_of(entry, score) < high
    assert entry["error_class"] == BOOM  # the job's error, not the hook's
    asked_once(shared_run, jobs.RAISE)
    lines = warnings_about(shared_run, "raises")
    assert len(lines) == 1, f"{lines}\n{shared_run.context()}"
    assert " ERROR " in lines[0]
    fails = shared_run.job_class(jobs.Fails).class_path()
    assert f"retry_in of {fails} raised for jid={shared_run.jids['raises']}" in lines[0]
    assert f"{qualified(jobs.HookBoomError)}: retry_in exploded" in lines[0]


def test_the_hook_is_not_asked_about_the_last_failure(shared_run: Observed) -> None:
    """retry=0 is never asked; a budget of 2 is asked after failures 1 and 2, not the 3rd."""
    assert shared_run.records(shared_run.jids["retry_zero"], "retry_in") == []
    assert shared_run.entry(DEAD_KEY, shared_run.jids["retry_zero"]) is not None

    budget = shared_run.jids["budget"]
    calls = shared_run.records(budget, "retry_in")
    assert [call["count"] for call in calls] == [0, 1], shared_run.context()
    assert shared_run.rc.llen(f"policy:runs:{budget}") == 3
    found = shared_run.entry(DEAD_KEY, budget)
    assert found is not None
    assert found[0]["retry_count"] == 3


@pytest.mark.parametrize("case", ["missing_class", "not_a_job"])
def test_the_hook_is_not_asked_when_the_class_cannot_be_loaded(
    shared_run_once: Observed, case: str
) -> None:
    """A job naming a missing class (or a non-Job with a retry_in) gets the default, unasked."""
    entry, score = retry_entry(shared_run_once, case)
    low, high = default_bounds(1)
    assert low <= delay_of(entry, score) < high
    assert entry["error_class"] == qualified(UnknownJobClassError)
    assert shared_run_once.records(shared_run_once.jids[case], "retry_in") == []
    assert not [r for r in shared_run_once.records(hook="retry_in") if r.get("cls") == "NotAJob"]


def test_a_delay_over_a_year_is_used_as_given_with_a_warning(shared_run: Observed) -> None:
    """Two years: the score is failed_at + two years, and a warning calls it a likely mistake."""
    entry, score = retry_entry(shared_run, "year")
    assert delay_of(entry, score) == pytest.approx(jobs.YEAR_AND_MORE, abs=1e-3)
    asked_once(shared_run, "year")
    lines = warnings_about(shared_run, "year")
    assert len(lines) == 1, f"{lines}\n{shared_run.context()}"
    assert " WARNING " in lines[0]
    assert "over a year" in lines[0]
    assert str(jobs.YEAR_AND_MORE) in lines[0]
