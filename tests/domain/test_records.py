"""How run and attempt records are written: compact JSON, the same text as the stdlib's."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import records
from tests.domain.strategies import names, timestamps

texts = st.text(max_size=30)

run_records = st.builds(
    records.RunRecord,
    jid=texts,
    class_name=names,
    queue=names,
    started_at=timestamps,
    ended_at=timestamps,
    outcome=texts,
    process=texts,
    error=st.none() | texts,
    timed_out=st.sampled_from([None, "soft", "hard"]),
)


def _stdlib_json(run: records.RunRecord) -> str:
    fields = {
        "jid": run.jid,
        "class_name": run.class_name,
        "queue": run.queue,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "outcome": run.outcome,
        "process": run.process,
        "error": run.error,
        **({} if run.timed_out is None else {"timed_out": run.timed_out}),
        "duration": round(run.ended_at - run.started_at, 6),
    }
    return json.dumps(fields, separators=(",", ":"))


@given(run_records)
def test_a_run_is_written_as_the_stdlib_writes_it(run: records.RunRecord) -> None:
    """Any text (quotes, control characters, non-ASCII) and any clock value: the same bytes."""
    assert records.to_json(run) == _stdlib_json(run)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_run_with_a_clock_value_json_cannot_carry_is_refused(bad: float) -> None:
    """No invalid JSON is ever stored: such a run is refused, as any record would be."""
    run = records.RunRecord(
        jid="j",
        class_name="C",
        queue="q",
        started_at=bad,
        ended_at=1.0,
        outcome="success",
        process="p",
    )
    with pytest.raises(ValueError, match="JSON compliant"):
        records.to_json(run)


@given(
    st.builds(
        records.AttemptRecord,
        attempt=st.integers(min_value=1, max_value=30),
        failed_at=timestamps,
        error_class=names,
        error_message=texts,
        outcome=texts,
        timed_out=st.sampled_from([None, "soft", "hard"]),
    )
)
def test_an_attempt_round_trips(attempt: records.AttemptRecord) -> None:
    """An attempt record reads back as the fields it was written from (`timed_out` only
    when it timed out)."""
    assert json.loads(records.to_json(attempt)) == {
        "attempt": attempt.attempt,
        "failed_at": attempt.failed_at,
        "error_class": attempt.error_class,
        "error_message": attempt.error_message,
        "outcome": attempt.outcome,
        **({} if attempt.timed_out is None else {"timed_out": attempt.timed_out}),
    }
