"""Issue #4's numbered scope points 2, 3, 5 and 7, on a real worker (7: in-process, no Redis).

Points 2, 3 and 5 read the shared run, for sync and async job classes (see
conftest); point 4 is the death-hook
table (test_death_table.py), point 6's interrupted retry is in its "filed
later" test.
"""

from __future__ import annotations

import pytest

import cogworker
from tests.policy import jobs
from tests.policy.helpers import (
    ALL_DEATH_HOOKS,
    DEAD_KEY,
    IN_DEAD,
    PROCESSED_KEY,
    RETRY_KEY,
    Observed,
    delay_of,
    qualified,
)
from tests.support.async_variants import Kind, of_kind

UNREACHABLE_REDIS_URL = "redis://127.0.0.1:1/0"
BOOM = qualified(jobs.PolicyBoomError)


# -- 2. when retry_in is asked ---------------------------------------------------------


def test_retry_in_is_asked_before_a_middleware_swallows_the_error(shared_run: Observed) -> None:
    """A middleware swallows perform's error: retry_in was still asked, and the job is acked."""
    jid = shared_run.jids["swallowed"]
    calls = shared_run.records(jid)
    assert [c["hook"] for c in calls] == ["retry_in", "middleware_swallowed"], shared_run.context()
    assert (calls[0]["exc_class"], calls[0]["exc_message"]) == (BOOM, "boom: hour")
    assert (calls[1]["exc_class"], calls[1]["exc_message"]) == (BOOM, "boom: hour")
    assert shared_run.entry(RETRY_KEY, jid) is None
    assert shared_run.entry(DEAD_KEY, jid) is None
    assert any(" INFO done " in line for line in shared_run.log_lines(jid))
    assert not any(" fail " in line for line in shared_run.log_lines(jid))


def test_a_middleware_error_is_decided_after_the_chain(shared_run: Observed) -> None:
    """perform succeeded, a middleware then raised: retry_in gets that error; the job is retried."""
    jid = shared_run.jids["mw_raises"]
    assert shared_run.rc.sismember(jobs.DONE_KEY, jid)  # perform itself succeeded
    calls = shared_run.records(jid, "retry_in")
    assert len(calls) == 1, shared_run.context()
    assert calls[0]["exc_class"] == qualified(jobs.MiddlewareBoomError)
    assert calls[0]["exc_message"] == "middleware says no"
    found = shared_run.entry(RETRY_KEY, jid)
    assert found is not None, shared_run.context()
    entry, score = found
    assert entry["error_class"] == qualified(jobs.MiddlewareBoomError)
    assert entry["error_message"] == "middleware says no"
    assert delay_of(entry, score) == pytest.approx(3600, abs=1e-3)  # the hook's answer


def test_the_failure_outcome_stamp_never_reaches_a_stored_entry(shared_run_once: Observed) -> None:
    """No retry or dead entry, nor any job a hook was handed, carries `failure_outcome`."""
    stored = shared_run_once.entries(RETRY_KEY) + shared_run_once.entries(DEAD_KEY)
    assert len(stored) >= 20, shared_run_once.context()
    assert [e for e in stored if "failure_outcome" in e] == []
    handed = [r["job"] for r in shared_run_once.records() if isinstance(r.get("job"), dict)]
    assert handed
    assert [job for job in handed if "failure_outcome" in job] == []


# -- 3. calling user hooks ---------------------------------------------------------------


def test_hooks_get_as_many_positional_arguments_as_they_accept(shared_run: Observed) -> None:
    """retry_in(cls, count) gets the count; a one-parameter handler the job; a *args one both."""
    one_param_class = shared_run.job_class(jobs.OneParamJob).__name__
    one_param = [c for c in shared_run.records(hook="retry_in") if c["cls"] == one_param_class]
    assert len(one_param) == 1, shared_run.context()
    assert one_param[0]["count"] == 0
    found = shared_run.entry(RETRY_KEY, shared_run.jids["one_param"])
    assert found is not None
    assert delay_of(*found) == pytest.approx(jobs.ONE_PARAM_DELAY, abs=1e-3)

    for case in IN_DEAD:
        jid = shared_run.jids[case]
        (mutating,) = shared_run.records(jid, "mutating_handler")
        assert mutating["nargs"] == 1
        assert mutating["job"]["jid"] == jid
        (star,) = shared_run.records(jid, "star_handler")
        assert star["nargs"] == 2
        assert star["job"]["jid"] == jid
        assert star["exc_class"].startswith(("tests.policy.jobs.", "cogworker.exceptions."))


def test_each_death_hook_gets_its_own_copy(shared_run: Observed) -> None:
    """A handler that mutates its job changes neither the next handler's copy nor the dead entry."""
    for case in IN_DEAD:
        jid = shared_run.jids[case]
        found = shared_run.entry(DEAD_KEY, jid)
        assert found is not None, f"{case}\n{shared_run.context()}"
        stored, _ = found
        (first,) = shared_run.records(jid, "first_handler")
        (star,) = shared_run.records(jid, "star_handler")  # runs after mutating_handler
        assert star["job"] == first["job"] == stored, case
        assert "mutated" not in star["job"]
        assert "mutated" not in stored["args"]


def test_a_raising_hook_is_logged_and_the_others_still_run(shared_run: Observed) -> None:
    """retries_exhausted and a handler raise: both logged, the other hooks ran, the job is acked."""
    jid = shared_run.jids["raising_exhausted"]
    assert shared_run.death_hooks(jid) == list(ALL_DEATH_HOOKS), shared_run.context()
    lines = [line for line in shared_run.log_lines(jid) if " ERROR " in line]
    class_hook = (
        f"retries_exhausted failed for jid={jid} (ignored): "
        f"{qualified(jobs.ExhaustedBoomError)}: retries_exhausted exploded"
    )
    handler = (
        f"death handler failed for jid={jid} (ignored): "
        f"{qualified(jobs.HandlerBoomError)}: handler exploded"
    )
    assert any(class_hook in line for line in lines), lines
    assert any(handler in line for line in lines), lines
    assert shared_run.entry(DEAD_KEY, jid) is not None
    assert all(r["in_progress"] is False for r in shared_run.records(jid) if "in_progress" in r)
    assert shared_run.in_progress() == []
    # Every job that ran after these hooks raised was still processed (the worker went on).
    assert int(shared_run.rc.get(PROCESSED_KEY) or 0) >= len(shared_run.jids)


def test_hooks_are_inherited_from_an_app_wide_base_class(shared_run: Observed) -> None:
    """A class defining no hook gets both from its app-wide base class, called on itself."""
    inheriting = shared_run.job_class(jobs.InheritingJob)
    assert "retry_in" not in vars(inheriting)
    assert "retries_exhausted" not in vars(inheriting)
    jid = shared_run.jids["inheriting"]
    (asked,) = shared_run.records(jid, "retry_in")
    assert asked["cls"] == inheriting.__name__
    (exhausted,) = shared_run.records(jid, jobs.CLASS_HOOK)
    assert exhausted["cls"] == inheriting.__name__
    assert (exhausted["exc_class"], exhausted["exc_message"]) == (BOOM, "boom: kill")
    found = shared_run.entry(DEAD_KEY, jid)
    assert found is not None
    assert found[0]["class"] == inheriting.class_path()


# -- 5. once, and only after it is safe ----------------------------------------------


def test_death_hooks_run_once_and_only_after_the_job_is_in_dead_and_acked(
    shared_run: Observed,
) -> None:
    """Each death hook ran once per death, in the worker, once the job was in dead and acked."""
    for case, expected in IN_DEAD.items():
        jid = shared_run.jids[case]
        calls = [r for r in shared_run.records(jid) if r["hook"] in ALL_DEATH_HOOKS]
        assert [c["hook"] for c in calls] == list(expected), f"{case}\n{shared_run.context()}"
        for call in calls:
            assert call["in_dead"] is True, (case, call["hook"])
            assert call["in_progress"] is False, (case, call["hook"])
            assert call["pid"] == shared_run.worker.pid


# -- 7. testing mode ---------------------------------------------------------------------


def test_inline_raises_the_jobs_error_and_runs_no_hooks(kind: Kind) -> None:
    """testing.inline(): the job's error reaches the caller; no retry_in or death hook runs."""
    jobs.LOCAL_RECORDS.clear()
    config = cogworker.Config(redis_url=UNREACHABLE_REDIS_URL, death_handlers=jobs.HANDLERS)
    client = cogworker.Client(config)
    fails = of_kind(jobs.Fails, kind)
    try:
        with cogworker.testing.inline(), pytest.raises(jobs.PolicyBoomError, match="boom: kill"):
            client.enqueue(fails, "kill")
        with cogworker.testing.inline(), pytest.raises(jobs.PolicyBoomError, match="boom: hour"):
            client.enqueue(of_kind(jobs.FailsRetryFalse, kind), "hour")
        with cogworker.testing.inline(), pytest.raises(jobs.PolicyBoomError, match="discard"):
            fails.perform_async("discard")
    finally:
        client.close()
    assert jobs.LOCAL_RECORDS == []
    # A hook is tested by calling the classmethod directly.
    answer = fails.retry_in(0, jobs.PolicyBoomError("boom"), {"jid": "j", "args": ["kill"]})
    assert answer is cogworker.KILL
