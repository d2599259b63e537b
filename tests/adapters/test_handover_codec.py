"""A settlement handed over by a stopping process reads back exactly; a damaged one is refused."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from cogworker.adapters.jobs.handover import handover_record, parse_handover_record
from cogworker.adapters.jobs.outcome import OutcomeRecord

texts = st.text(max_size=30)
records = st.builds(
    OutcomeRecord,
    kind=st.sampled_from(["ack", "retry", "dead", "discard", "cancel", "expire"]),
    jid=texts,
    class_name=texts,
    score=st.floats(allow_nan=False, allow_infinity=False),
    payload=texts,
    attempt=texts,
    history=texts,
    history_per_job=st.booleans(),
    status=texts,
    unique_lock=texts,
    unique_action=st.sampled_from(["release", "extend", ""]),
    lock_ttl=st.floats(min_value=0, max_value=1e12),
    running_lock=texts,
)


@given(records)
def test_a_handed_over_record_reads_back_as_it_was(outcome: OutcomeRecord) -> None:
    """Written and read back, every field is as it was (defaults left out in the JSON)."""
    assert parse_handover_record(handover_record(outcome).encode()) == outcome


@given(records, st.sampled_from(["kind", "jid", "history_per_job", "score"]))
def test_a_record_damaged_by_hand_is_none(outcome: OutcomeRecord, field: str) -> None:
    """A missing kind or jid, or a field of the wrong JSON type, is no record at all."""
    fields = json.loads(handover_record(outcome))
    if field in ("kind", "jid"):
        fields.pop(field, None)
    else:
        fields[field] = "not a " + field
    assert parse_handover_record(json.dumps(fields).encode()) is None


def test_text_that_is_no_json_object_is_none() -> None:
    """Not JSON, or JSON of another shape: None, never an exception."""
    for raw in (b"", b"[1]", b'"x"', b"{", b'{"kind": "bogus", "jid": "j"}'):
        assert parse_handover_record(raw) is None
