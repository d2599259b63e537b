"""Properties of the settlement: what a run's end writes, checked against the spec's tables."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cogworker.domain import settlement
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.deadlines import TimedOut
from cogworker.domain.failure import (
    DISCARD,
    KILL,
    NO_HOOK,
    HookAnswer,
    HookRaised,
    HookReturned,
)
from cogworker.domain.job import ErrorRecord, JobRecord
from cogworker.domain.locks import Extend, HeldLocks, Release, held_locks, locks_released_for_good
from cogworker.domain.retries import default_backoff, is_last_failure
from cogworker.domain.settlement import (
    MAX_INTERRUPTS,
    Ack,
    Cancelled,
    Discarded,
    EndedByCancel,
    Expired,
    Keeping,
    Raised,
    Returned,
    Run,
    Settlement,
    ToDead,
    ToRetry,
)
from cogworker.domain.status import is_tracked
from tests.domain.strategies import (
    error_records,
    hook_answers,
    job_records,
    jobs_on_last_failure,
    jobs_with_retries_left,
)

ERROR = ErrorRecord(class_name="app.errors.Boom", message="boom")
NOW = 1_800_000_000.0
KEEP_ALL = Keeping(track_all=True, history=True, unique_lock_ttl=600.0)

keepings = st.builds(
    Keeping,
    track_all=st.booleans(),
    history=st.booleans(),
    unique_lock_ttl=st.floats(min_value=1, max_value=1e6),
    metrics=st.booleans(),
)
jitters = st.floats(min_value=0, max_value=29.999, allow_nan=False)
ends: st.SearchStrategy[settlement.RunEnd] = st.one_of(
    st.builds(Returned),
    st.builds(Raised, error=error_records, answer=hook_answers),
    st.builds(EndedByCancel, error=error_records),
)


def run_of(job: JobRecord) -> Run:
    """`job`'s run on queue "q", one second long, ending at NOW."""
    return Run(job=job, queue="q", process="host:1:ab", started_at=NOW - 1, ended_at=NOW)


def failed(
    job: JobRecord, answer: HookAnswer = NO_HOOK, *, keeping: Keeping = KEEP_ALL, jitter: float = 0
) -> Settlement:
    """`job`'s run, failed with ERROR and `answer` from its hook, settled at NOW."""
    end = Raised(error=ERROR, answer=answer)
    return settlement.settle(run_of(job), end, keeping, now=NOW, jitter=jitter)


def job(retry: bool | int, made: int, **extra: str) -> JobRecord:
    """A job with the `retry` option, `made` retries made and payload fields `extra`."""
    return JobRecord(
        class_name="app.Send",
        queue="q",
        jid="j1",
        retry=retry,
        retry_count=made or None,
        extra=extra,
    )


# The spec's retry_in table ("Custom delay") and death-hook table, row by row:
# (retry option, retries made, the hook's answer) -> where the job goes.
TABLE = [
    pytest.param(True, 0, HookReturned(value=60), ToRetry, id="seconds: retry after them"),
    pytest.param(True, 0, HookReturned(value=0), ToRetry, id="0: the next poll"),
    pytest.param(True, 0, HookReturned(value=None), ToRetry, id="None: the default delay"),
    pytest.param(True, 3, HookReturned(value=KILL), ToDead, id="KILL: dead, hooks run"),
    pytest.param(True, 3, HookReturned(value=DISCARD), Discarded, id="DISCARD: dropped"),
    pytest.param(True, 0, HookReturned(value="soon"), ToRetry, id="anything else: default"),
    pytest.param(True, 0, HookRaised(error=ERROR), ToRetry, id="it raised: default"),
    pytest.param(True, 25, NO_HOOK, ToDead, id="out of retries: dead, hooks run"),
    pytest.param(False, 0, NO_HOOK, ToDead, id="retry=False: dead, hooks run"),
    pytest.param(0, 0, NO_HOOK, ToDead, id="retry=0: dead, hooks run"),
    pytest.param(5, 0, NO_HOOK, ToRetry, id="no hook: the budget decides"),
]


@pytest.mark.parametrize(("retry", "made", "answer", "variant"), TABLE)
def test_the_spec_tables_row_by_row(
    retry: bool | int, made: int, answer: HookAnswer, variant: type
) -> None:
    """Each row of the retry_in and death-hook tables settles as the spec says."""
    assert type(failed(job(retry, made), answer)) is variant


def test_a_hook_delay_is_used_exactly_and_the_default_grows_with_jitter() -> None:
    """Seconds from the hook: retried exactly that much later; None: the default backoff."""
    exact = failed(job(True, 0), HookReturned(value=60), jitter=29)
    default = failed(job(True, 2), HookReturned(value=None), jitter=10)
    assert isinstance(exact, ToRetry)
    assert isinstance(default, ToRetry)
    assert exact.at == NOW + 60
    assert default.at == NOW + default_backoff(3, 10)


@given(job_records(), ends, keepings, jitters)
def test_every_end_settles_as_exactly_one_variant(
    job: JobRecord, end: settlement.RunEnd, keeping: Keeping, jitter: float
) -> None:
    """A returned run is an Ack, a cancelled one Cancelled, a raised one a failure (or Expired
    when its retry would come too late); nothing else and nothing both."""
    settled = settlement.settle(run_of(job), end, keeping, now=NOW, jitter=jitter)
    assert isinstance(settled, Ack) == isinstance(end, Returned)
    assert isinstance(settled, Cancelled) == isinstance(end, EndedByCancel)
    if isinstance(settled, Expired):
        assert isinstance(end, Raised)
        assert job.expires_at is not None
    assert settlement.is_terminal(settled) == (not isinstance(settled, ToRetry))


@given(jobs_on_last_failure(), hook_answers)
@example(job(False, 0), HookReturned(value=KILL))
def test_the_last_failure_is_dead_whatever_the_hook_says(
    job: JobRecord, answer: HookAnswer
) -> None:
    """No retry left: dead as exhausted, and the death hooks run (ToDead)."""
    settled = failed(job, answer)
    assert isinstance(settled, ToDead)
    assert settled.cause == "exhausted"
    assert settlement.attempt_outcome(settled) == "dead"


@given(jobs_with_retries_left())
def test_kill_is_dead_as_killed_and_discard_is_dropped(job: JobRecord) -> None:
    """KILL: dead, "killed" in the attempts log; DISCARD: discarded, no entry to file."""
    killed, dropped = (
        failed(job, HookReturned(value=KILL)),
        failed(job, HookReturned(value=DISCARD)),
    )
    assert isinstance(killed, ToDead)
    assert killed.cause == "killed"
    assert settlement.attempt_outcome(killed) == "killed"
    assert isinstance(dropped, Discarded)
    assert settlement.attempt_outcome(dropped) == "discarded"


@given(job_records(), error_records, hook_answers, keepings)
def test_a_failure_counts_one_more_retry_and_records_it(
    job: JobRecord, error: ErrorRecord, answer: HookAnswer, keeping: Keeping
) -> None:
    """The filed record has one more failure; the attempt record says how the attempt ended."""
    run = run_of(job)
    settled = settlement.settle(run, Raised(error=error, answer=answer), keeping, now=NOW, jitter=0)
    assert not isinstance(settled, Ack)
    assert settled.job.retries_made == job.retries_made + 1
    assert settled.job.error_class == error.class_name
    attempt = settled.effects.attempt
    assert attempt is not None
    assert attempt.attempt == settled.job.retries_made
    assert attempt.outcome == settlement.attempt_outcome(settled)
    history = settled.effects.history
    assert (history is not None) == keeping.history
    if history is not None:
        assert history.outcome == attempt.outcome
        assert history.error == error.summary


@given(job_records(), ends, keepings)
def test_a_status_is_written_only_for_tracked_jobs_and_follows_the_end(
    job: JobRecord, end: settlement.RunEnd, keeping: Keeping
) -> None:
    """Tracked: complete, retrying, dead or discarded by the variant; untracked: none."""
    settled = settlement.settle(run_of(job), end, keeping, now=NOW, jitter=0)
    expected = {
        Ack: "complete", ToRetry: "retrying", ToDead: "dead", Discarded: "discarded",
        Cancelled: "cancelled", Expired: "expired",
    }  # fmt: skip
    tracked = keeping.track_all or job.extra.get("track_status") is True
    assert settled.effects.status == (expected[type(settled)] if tracked else None)


@given(job_records(), keepings)
def test_a_success_goes_to_its_jobs_own_history_only_when_worth_it(
    job: JobRecord, keeping: Keeping
) -> None:
    """A plain first success goes to its class's history only; tracked or retried, its own too."""
    settled = settlement.settle(run_of(job), Returned(), keeping, now=NOW, jitter=0)
    tracked = is_tracked(job, keeping.track_all)
    assert settled.effects.history_per_job == (tracked or job.retries_made > 0)
    assert settled.effects.attempt is None


@given(ends, st.sampled_from(["until_executed", "until_executing", "while_executing"]))
@example(Raised(error=ERROR, answer=HookReturned(value=10**9)), "until_executed")
def test_a_unique_lock_is_extended_through_a_retry_and_released_at_the_end(
    end: settlement.RunEnd, mode: str
) -> None:
    """until_executed: extended past the retry, released for good; while_executing: released
    when the run ends; until_executing: already let go of when the run started."""
    locked = job(True, 0, unique=mode, unique_lock="cogworker:unique:x")
    settled = settlement.settle(run_of(locked), end, KEEP_ALL, now=NOW, jitter=0)
    effect = settled.effects.unique_lock
    if mode == "until_executing":
        assert effect is None
        return
    assert effect is not None
    assert effect.key == "cogworker:unique:x"
    if mode == "until_executed" and isinstance(settled, ToRetry):
        assert isinstance(effect.change, Extend)
        assert effect.change.ttl >= min(settled.at - NOW, 3_155_760_000)
    else:
        assert isinstance(effect.change, Release)


@given(ends)
def test_a_periodic_running_lock_is_released_exactly_when_the_job_ends_for_good(
    end: settlement.RunEnd,
) -> None:
    """A periodic run's lock stays through retries and goes once the job ends for good."""
    periodic = job(True, 0, running_lock="cogworker:periodic:running:nightly")
    settled = settlement.settle(run_of(periodic), end, KEEP_ALL, now=NOW, jitter=0)
    released = settled.effects.running_lock
    assert (released is not None) == settlement.is_terminal(settled)


@given(job_records())
def test_fields_that_are_not_strings_name_no_lock(job: JobRecord) -> None:
    """A payload whose lock fields aren't strings holds no lock; strings are taken as given."""
    odd = attrs.evolve(job, extra={"unique_lock": 7, "running_lock": ["x"], "unique": None})
    assert held_locks(odd) == HeldLocks()
    assert locks_released_for_good(odd) == ()
    named = attrs.evolve(job, extra={"unique_lock": "a", "running_lock": "b"})
    assert locks_released_for_good(named) == ("a", "b")


def interrupted(job: JobRecord, answer: HookAnswer = NO_HOOK) -> Settlement:
    """`job`'s failure settled again after its first write failed."""
    end = Raised(error=ERROR, answer=answer)
    return settlement.settle(run_of(job), end, KEEP_ALL, now=NOW, jitter=0, interrupted=True)


@given(jobs_with_retries_left(), st.integers(0, MAX_INTERRUPTS - 1))
@example(job(True, 0), 0)
def test_an_interrupted_retry_waits_30s_per_interruption_whatever_the_hook_said(
    job: JobRecord, before: int
) -> None:
    """Retried after 30 s times its interruptions (this one counted), not the hook's delay."""
    settled = interrupted(attrs.evolve(job, interrupted_count=before), HookReturned(value=12345))
    assert isinstance(settled, ToRetry)
    assert settled.job.interrupted_count == before + 1
    assert settled.at == NOW + 30.0 * (before + 1)
    assert "interruption" in settlement.interruption_reason(settled)


@given(jobs_with_retries_left(), st.integers(MAX_INTERRUPTS, 1000))
def test_a_job_interrupted_too_often_is_dead(job: JobRecord, before: int) -> None:
    """Past MAX_INTERRUPTS interruptions a job that would retry goes to dead instead."""
    settled = interrupted(attrs.evolve(job, interrupted_count=before))
    assert isinstance(settled, ToDead)
    assert settled.cause == "interrupted"
    assert settlement.attempt_outcome(settled) == "dead"
    assert "interrupted more than" in settlement.interruption_reason(settled)


@given(job_records(), hook_answers, st.integers(0, 1000))
def test_an_interruption_never_turns_an_end_for_good_into_a_retry(
    job: JobRecord, answer: HookAnswer, before: int
) -> None:
    """Dead stays dead (no retries left, or killed) and a discard stays a discard."""
    first = failed(job, answer)
    again = interrupted(attrs.evolve(job, interrupted_count=before), answer)
    if settlement.is_terminal(first):
        assert type(again) is type(first)
    if is_last_failure(job):
        assert isinstance(again, ToDead)
        assert settlement.interruption_reason(again) == "moved to dead: no retries left"


@given(job_records(), error_records, keepings)
@example(job(True, 0, unique="until_executed", unique_lock="cogworker:unique:x"), ERROR, KEEP_ALL)
def test_a_cancelled_run_ends_for_good_as_cancelled(
    job: JobRecord, error: ErrorRecord, keeping: Keeping
) -> None:
    """Cancelled: not retried, not counted as a retry, on the timeline as "cancelled", its
    locks let go of as at any end for good."""
    settled = settlement.settle(run_of(job), EndedByCancel(error=error), keeping, now=NOW, jitter=0)
    assert isinstance(settled, Cancelled)
    assert settlement.is_terminal(settled)
    assert settled.job.retries_made == job.retries_made
    attempt = settled.effects.attempt
    assert attempt is not None
    assert (attempt.outcome, attempt.error_class) == ("cancelled", error.class_name)
    assert settlement.attempt_outcome(settled) == "cancelled"
    if keeping.history:
        assert settled.effects.history is not None
        assert settled.effects.history.outcome == "cancelled"
    lock = settled.effects.unique_lock
    assert lock is None or isinstance(lock.change, Release)


@given(jobs_with_retries_left(), st.floats(min_value=-1e6, max_value=1e6))
@example(job(True, 0), 0.0)
@example(job(True, 0), 1e6)
def test_a_retry_that_would_start_past_the_expiry_is_expired(job: JobRecord, margin: float) -> None:
    """A failure with a retry left retries before its expiry and expires at or after it;
    the failure is recorded either way."""
    due = failed(job, HookReturned(value=60))
    assert isinstance(due, ToRetry)
    expiring = attrs.evolve(job, expires_at=due.at + margin)
    settled = failed(expiring, HookReturned(value=60))
    if due.at < expiring.expires_at:
        assert settled.at == due.at
        return
    assert isinstance(settled, Expired)
    assert settled.job.retries_made == job.retries_made + 1
    assert settled.effects.attempt is not None
    assert settled.effects.attempt.outcome == "expired"
    assert settled.effects.status == "expired"
    assert "expired" in settlement.interruption_reason(settled)


@given(job_records(), keepings)
def test_a_job_fetched_past_its_expiry_is_dropped_unrun(job: JobRecord, keeping: Keeping) -> None:
    """Expired at fetch: an attempt record says so, no run history (it never ran), locks let go."""
    periodic = attrs.evolve(job, extra={**job.extra, "running_lock": "cogworker:p:r"})
    settled = settlement.expire(periodic, keeping, now=NOW)
    assert settled.job == periodic
    assert settled.effects.history is None
    assert settled.effects.attempt is not None
    assert settled.effects.attempt.outcome == "expired"
    assert settled.effects.running_lock is not None
    assert isinstance(settled.effects.running_lock.change, Release)
    tracked = is_tracked(periodic, keeping.track_all)
    assert settled.effects.status == ("expired" if tracked else None)


@given(job_records(), st.integers(0, 1000))
def test_an_interruption_leaves_a_cancel_a_cancel(job: JobRecord, before: int) -> None:
    """A cancel whose first write failed is settled again as the same cancel."""
    counted = attrs.evolve(job, interrupted_count=before)
    end = EndedByCancel(error=ERROR)
    again = settlement.settle(run_of(counted), end, KEEP_ALL, now=NOW, jitter=0, interrupted=True)
    assert isinstance(again, Cancelled)
    assert settlement.interruption_reason(again) == "cancelled"


@given(job_records(), keepings)
def test_a_waiting_job_cancelled_is_dropped_unrun(job: JobRecord, keeping: Keeping) -> None:
    """Cancelled while it waits: an attempt record says so, no run history, locks let go."""
    unique = attrs.evolve(
        job, extra={**job.extra, "unique": "until_executed", "unique_lock": "cogworker:u:x"}
    )
    settled = settlement.cancel_waiting(unique, keeping, now=NOW)
    assert isinstance(settled, Cancelled)
    assert settled.effects.history is None
    assert settled.effects.attempt is not None
    assert settled.effects.attempt.outcome == "cancelled"
    assert settled.effects.unique_lock is not None
    assert isinstance(settled.effects.unique_lock.change, Release)
    assert settlement.interruption_reason(settled) == "cancelled"
    assert settlement.attempt_outcome(settled) == "cancelled"


def test_an_expired_drop_says_so_in_the_log_line() -> None:
    """The log line of an Expired names the expiry, its attempt outcome says expired."""
    dropped = settlement.expire(job(True, 0), KEEP_ALL, now=NOW)
    assert settlement.interruption_reason(dropped).startswith("expired")
    assert settlement.attempt_outcome(dropped) == "expired"


@given(jobs_with_retries_left())
def test_an_interrupted_kill_or_discard_keeps_its_reason(job: JobRecord) -> None:
    """Written late, a KILL stays a kill and a DISCARD a discard, each saying so."""
    killed = interrupted(job, HookReturned(value=KILL))
    dropped = interrupted(job, HookReturned(value=DISCARD))
    assert settlement.interruption_reason(killed) == "moved to dead: ended by its retry_in (killed)"
    assert settlement.interruption_reason(dropped) == "discarded by its retry_in"


@given(job_records(), hook_answers, st.sampled_from(["soft", "hard"]), st.booleans())
def test_a_timed_out_run_is_an_ordinary_failure_marked_timed_out(
    job: JobRecord, answer: HookAnswer, how: TimedOut, expiring: bool
) -> None:
    """A run ended by its time limit settles exactly as the same failure would (the hook's
    answer, the retry budget, an expiry), its attempt and history saying how it timed out."""
    if expiring:
        job = attrs.evolve(job, expires_at=NOW)
    plain = settlement.settle(
        run_of(job), Raised(error=ERROR, answer=answer), KEEP_ALL, now=NOW, jitter=0
    )
    timed = settlement.settle(
        run_of(job), Raised(error=ERROR, answer=answer, timed_out=how), KEEP_ALL, now=NOW, jitter=0
    )
    assert not isinstance(plain, Ack)
    assert not isinstance(timed, Ack)
    assert type(timed) is type(plain)
    assert settlement.attempt_outcome(timed) == settlement.attempt_outcome(plain)
    assert timed.effects.attempt is not None
    assert timed.effects.history is not None
    assert (timed.effects.attempt.timed_out, timed.effects.history.timed_out) == (how, how)
    assert plain.effects.attempt is not None
    assert plain.effects.attempt.timed_out is None


@given(job_records(), ends, keepings, jitters)
def test_every_run_that_ends_adds_a_sample_to_its_class_metrics(
    record: JobRecord, end: settlement.RunEnd, keeping: Keeping, jitter: float
) -> None:
    """A run's settlement carries its run time, failed unless it succeeded; none when the
    configuration keeps no metrics."""
    settled = settlement.settle(run_of(record), end, keeping, now=NOW, jitter=jitter)
    expected = RunSample(queue="q", micros=1_000_000, failed=not isinstance(settled, Ack))
    assert settled.effects.sample == (expected if keeping.metrics else None)


def test_a_job_dropped_before_it_ran_adds_no_sample() -> None:
    """An expired job that never started is no run of its class."""
    assert settlement.expire(job(True, 0), KEEP_ALL, now=NOW).effects.sample is None
