"""Properties of the payload codec: job records to and from their JSON in Redis."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.domain.payload import (
    PayloadError,
    PayloadProblem,
    decode,
    encode,
    from_dict,
    to_dict,
)
from tests.domain.strategies import PAYLOAD_FIELDS, extra_keys, job_records, json_values, names

#: A minimal payload every "bad field" case starts from.
VALID = {"class": "app.Job", "queue": "default", "jid": "abc"}


def problem_of(raw: str | bytes) -> PayloadProblem:
    """The problem `decode` reports for `raw`, failing the test if it decodes."""
    result = decode(raw)
    assert not is_successful(result), f"decoded: {result}"
    error: PayloadError = result.failure()
    return error.problem


@given(job_records())
def test_any_job_round_trips(job: JobRecord) -> None:
    """Decoding an encoded job gives the same job back."""
    assert decode(encode(job)).unwrap() == job


@given(job_records())
def test_bytes_decode_like_text(job: JobRecord) -> None:
    """Redis hands back bytes: they decode to the same job as the text."""
    assert decode(encode(job).encode()).unwrap() == job


@given(job_records())
def test_absent_optional_fields_are_left_out(job: JobRecord) -> None:
    """A payload holds no `null` for a field the job doesn't have."""
    obj = json.loads(encode(job))
    known = {key: value for key, value in obj.items() if key in PAYLOAD_FIELDS}
    assert None not in known.values()


@given(job_records(), st.dictionaries(extra_keys, json_values, min_size=1, max_size=4))
def test_unknown_keys_are_kept(job: JobRecord, added: dict[str, JSON]) -> None:
    """Keys cogworker doesn't know survive a read and a write unchanged."""
    obj = json.loads(encode(job))
    obj.update(added)
    read = decode(json.dumps(obj)).unwrap()
    assert {key: read.extra[key] for key in added} == added
    assert json.loads(encode(read)) == obj


@given(job_records())
def test_to_dict_is_the_payload(job: JobRecord) -> None:
    """The dict handed to hooks is exactly the stored payload, and reads back as the job."""
    assert to_dict(job) == json.loads(encode(job))
    assert from_dict(to_dict(job)).unwrap() == job


@given(st.one_of(st.text(), st.binary()))
def test_decode_never_raises(raw: str | bytes) -> None:
    """Any text or bytes at all decode to a job or to a problem, never an exception."""
    result = decode(raw)
    assert is_successful(result) or isinstance(result.failure(), PayloadError)


@given(st.text())
def test_whatever_decodes_can_be_encoded_again(text: str) -> None:
    """A payload accepted as a job can always be written back."""
    obj = dict(VALID, args=[text], created_at=1.5)
    assert decode(encode(decode(json.dumps(obj)).unwrap())).unwrap().args == (text,)


@pytest.mark.parametrize(
    "raw", ["", "{", "not json", '{"class": "A",}', b"\xff\xfe\x00", "[" * 100_000]
)
def test_not_json(raw: str | bytes) -> None:
    """Text that isn't JSON, or is nested too deep to read, is NOT_JSON."""
    assert problem_of(raw) is PayloadProblem.NOT_JSON


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_numbers_json_cant_carry_are_not_json(constant: str) -> None:
    """NaN and the infinities aren't JSON: accepted, the job couldn't be written back."""
    raw = '{"class": "A", "queue": "q", "jid": "j", "args": [' + constant + "]}"
    assert problem_of(raw) is PayloadProblem.NOT_JSON


@given(st.one_of(st.lists(json_values), st.text(), st.integers(), st.booleans(), st.none()))
def test_not_an_object(value: JSON) -> None:
    """JSON that isn't an object is NOT_AN_OBJECT."""
    assert problem_of(json.dumps(value)) is PayloadProblem.NOT_AN_OBJECT


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("class", PayloadProblem.NO_CLASS),
        ("queue", PayloadProblem.NO_QUEUE),
        ("jid", PayloadProblem.NO_JID),
    ],
)
@given(bad=st.one_of(st.just(None), st.just(""), st.integers(), st.lists(names, max_size=1)))
def test_missing_or_bad_identity(key: str, problem: PayloadProblem, bad: JSON) -> None:
    """A `class`, `queue` or `jid` that's absent, empty or not a string is that key's problem."""
    absent = {k: v for k, v in VALID.items() if k != key}
    assert problem_of(json.dumps(absent)) is problem
    assert problem_of(json.dumps(dict(VALID, **{key: bad}))) is problem


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("args", "not a list"),
        ("args", {"a": 1}),
        ("created_at", "yesterday"),
        ("created_at", True),
        ("retry", "yes"),
        ("retry", 2.5),
        ("retry_count", 1.5),
        ("retry_count", True),
        ("interrupted_count", "3"),
        ("enqueued_at", False),
        ("failed_at", [1]),
        ("error_class", 42),
        ("error_message", {"text": "boom"}),
        ("error_backtrace", ["line"]),
    ],
)
def test_bad_field(key: str, value: JSON) -> None:
    """A known field of the wrong type is BAD_FIELD, naming the field."""
    result = decode(json.dumps(dict(VALID, **{key: value})))
    assert not is_successful(result)
    assert result.failure().problem is PayloadProblem.BAD_FIELD
    assert key in str(result.failure())


@given(job_records())
def test_integral_times_are_accepted(job: JobRecord) -> None:
    """A time written as an integer (by another client) reads as that time."""
    obj = json.loads(encode(attrs.evolve(job, created_at=0.0)))
    obj["created_at"] = 1700000000
    assert decode(json.dumps(obj)).unwrap().created_at == 1700000000


def test_the_problem_reads_as_a_sentence() -> None:
    """A payload error prints as its problem and its detail."""
    error = PayloadError(problem=PayloadProblem.BAD_FIELD, detail="retry is a str")
    assert str(error) == "a field of the wrong type: retry is a str"
    assert str(PayloadError(problem=PayloadProblem.NO_JID)) == "no jid"
