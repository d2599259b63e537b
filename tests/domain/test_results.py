"""Properties of job results: which value a result holds, which settlement stores what, and
how long the record and the jid index last."""

from __future__ import annotations

import json
import math

import attrs
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from cogworker.domain import results, settlement
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.domain.settlement import Ack, Keeping, Returned, Settlement, ToRetry
from tests.domain.strategies import job_records, json_values
from tests.domain.test_settlement import NOW, ends, jitters, keepings, run_of

keeps = st.floats(min_value=0.001, max_value=1e7, allow_nan=False)
not_keeps = st.one_of(
    st.none(), st.booleans(), st.text(max_size=5), st.sampled_from([0, -1, -0.5, math.inf])
)
not_json = st.one_of(
    st.builds(set), st.builds(tuple), st.builds(object), st.just(math.nan), st.just(b"bytes")
)


def keeping(job: JobRecord, keep: float) -> JobRecord:
    """`job`, enqueued keeping its result `keep` seconds."""
    return attrs.evolve(job, extra={**job.extra, results.PAYLOAD_KEY: keep})


@given(json_values)
def test_a_json_native_value_is_kept_as_it_reads_back(value: JSON) -> None:
    """Within the cap, a JSON-native value is encoded, and its record reads back equal."""
    encoded = results.encoded_value(value, results.DEFAULT_MAX_BYTES)
    assert is_successful(encoded)
    stored = results.parse_record(results.success_record(encoded.unwrap()))
    assert stored == results.Stored(outcome="success", value=json.loads(json.dumps(value)))


@given(json_values, not_json)
def test_a_value_json_cannot_carry_is_refused_naming_where(value: JSON, bad: object) -> None:
    """A value holding anything JSON can't carry as is is refused, naming its place and type."""
    refused = results.encoded_value([value, bad], results.DEFAULT_MAX_BYTES)
    assert not is_successful(refused)
    assert "the return value[1] is" in refused.failure()
    assert "JSON-native" in refused.failure()


@given(st.integers(min_value=0, max_value=300), st.integers(min_value=2, max_value=300))
def test_a_value_over_the_cap_is_refused_naming_its_size_and_the_cap(length: int, cap: int) -> None:
    """The cap counts the bytes of the value's JSON: at most `cap` is kept, more is refused
    with both numbers."""
    value = "é" * length
    size = len(json.dumps(value).encode())  # as written: non-ASCII escaped
    encoded = results.encoded_value(value, cap)
    assert is_successful(encoded) == (size <= cap)
    if size > cap:
        assert f"{size} bytes" in encoded.failure()
        assert f"the {cap} a result may hold" in encoded.failure()


@given(
    st.sampled_from(["dead", "killed", "discarded", "cancelled", "expired"]),
    st.text(max_size=20),
    st.text(max_size=40),
)
def test_an_end_without_a_value_reads_back(
    outcome: results.FinalOutcome, error_class: str, message: str
) -> None:
    """The record of an end without a value reads back with its outcome and error."""
    stored = results.parse_record(results.ended_record(outcome, error_class, message))
    assert stored == results.Stored(outcome=outcome, error_class=error_class, error_message=message)


@given(
    st.one_of(
        st.text(max_size=30),
        st.sampled_from(['{"outcome":"won"}', "[]", "{", '{"outcome":"dead","error_class":1}']),
    )
)
def test_a_record_written_by_hand_is_none(text: str) -> None:
    """Text that isn't a record is none, never an error."""
    stored = results.parse_record(text)
    assert stored is None or stored.outcome in results.FinalOutcome.__args__  # type: ignore[attr-defined]  # a Literal


@given(job_records(), keeps)
def test_a_keep_is_whole_seconds_rounded_up(job: JobRecord, keep: float) -> None:
    """A positive keep_result keeps at least that long, in whole seconds."""
    kept = results.keep_of(keeping(job, keep))
    assert kept == math.ceil(keep)


@given(job_records(), not_keeps)
def test_anything_but_a_positive_number_keeps_nothing(job: JobRecord, keep: object) -> None:
    """No keep_result, or one that isn't a positive finite number: no result."""
    assert results.keep_of(keeping(job, keep)) is None  # type: ignore[arg-type]  # what is tested


@given(st.integers(min_value=1, max_value=10**7), st.none() | st.floats(0, 4e9), st.floats(0, 4e9))
def test_the_index_outlives_the_wait_the_allowance_and_the_keep(
    keep: int, run_at: float | None, now: float
) -> None:
    """From a push, the index lasts through the job's wait, the allowance, then its keep."""
    ttl = results.index_ttl_at_push(keep, run_at, now)
    wait = 0 if run_at is None else max(0.0, run_at - now)
    assert ttl >= wait + results.WAIT_ALLOWANCE + keep
    assert ttl <= wait + results.WAIT_ALLOWANCE + keep + 1


def settled(job: JobRecord, end: settlement.RunEnd, keep: Keeping, jitter: float) -> Settlement:
    """`run_of(job)` ended by `end`, settled at NOW."""
    return settlement.settle(run_of(job), end, keep, now=NOW, jitter=jitter)


@given(job_records(), ends, keepings, jitters, keeps)
def test_an_end_for_good_stores_its_record_and_a_retry_none(
    job: JobRecord, end: settlement.RunEnd, keep: Keeping, jitter: float, seconds: float
) -> None:
    """Keeping its result, a job's end for good stores its record in its queue's slot for
    the keep, the index lasting as long; a retry stores none and keeps the index past its
    retry's wait."""
    decided = settled(keeping(job, seconds), end, keep, jitter)
    kept = decided.effects.result
    assert kept is not None
    assert (kept.queue, kept.keep) == (job.queue, math.ceil(seconds))
    if isinstance(decided, ToRetry):
        assert kept.record is None
        assert kept.index_ttl >= decided.at - NOW + results.WAIT_ALLOWANCE + kept.keep
        return
    assert kept.record is not None
    assert kept.index_ttl == kept.keep
    stored = results.parse_record(kept.record)
    assert stored is not None
    if isinstance(decided, Ack):
        assert stored == results.Stored(outcome="success", value=None)
        return
    attempt = decided.effects.attempt
    assert attempt is not None
    assert stored.outcome == settlement.attempt_outcome(decided)
    assert (stored.error_class, stored.error_message) == (
        attempt.error_class,
        attempt.error_message,
    )


@given(job_records(), json_values, keepings, keeps)
def test_a_success_stores_the_value_returned(
    job: JobRecord, value: JSON, keep: Keeping, seconds: float
) -> None:
    """A returned run's record holds the value it returned."""
    text = results.encoded_value(value, results.DEFAULT_MAX_BYTES).unwrap()
    decided = settled(keeping(job, seconds), Returned(value=text), keep, 0)
    kept = decided.effects.result
    assert kept is not None
    assert kept.record is not None
    stored = results.parse_record(kept.record)
    assert stored == results.Stored(outcome="success", value=json.loads(text))


@given(job_records(), ends, keepings, jitters)
def test_a_job_keeping_no_result_stores_nothing(
    job: JobRecord, end: settlement.RunEnd, keep: Keeping, jitter: float
) -> None:
    """Without keep_result, no settlement stores a result or touches the index."""
    plain = attrs.evolve(job, extra={k: v for k, v in job.extra.items() if k != "keep_result"})
    assert settled(plain, end, keep, jitter).effects.result is None


@given(job_records(), keepings, keeps)
def test_a_job_dropped_before_it_ran_stores_why(
    job: JobRecord, keep: Keeping, seconds: float
) -> None:
    """Cancelled while waiting or expired at fetch: the record says so, with no error class."""
    job = keeping(job, seconds)
    for decided, outcome in (
        (settlement.cancel_waiting(job, keep, now=NOW), "cancelled"),
        (settlement.expire(job, keep, now=NOW), "expired"),
    ):
        kept = decided.effects.result
        assert kept is not None
        assert kept.record is not None
        stored = results.parse_record(kept.record)
        assert stored is not None
        assert (stored.outcome, stored.error_class) == (outcome, "")
        assert stored.error_message


@given(job_records(), keeps)
def test_a_job_buried_outside_a_settlement_stores_its_death(job: JobRecord, seconds: float) -> None:
    """Filed in dead by the reconciler: the record says dead, with the error it is filed
    with; without keep_result, nothing."""
    kept = results.buried(keeping(job, seconds))
    assert kept is not None
    assert kept.record is not None
    assert results.parse_record(kept.record) == results.Stored(
        outcome="dead", error_class=job.error_class or "", error_message=job.error_message or ""
    )
    plain = attrs.evolve(job, extra={k: v for k, v in job.extra.items() if k != "keep_result"})
    assert results.buried(plain) is None
