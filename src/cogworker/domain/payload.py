"""Job records to and from their JSON payload: the one place that maps the two.

Decoding never raises: a payload that can't be a job comes back as a
`PayloadError` saying what is wrong with it, so a worker loop can file it
instead of crashing on it.
"""

from __future__ import annotations

import enum
import json
import math
import operator
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON, compact_json


class PayloadProblem(enum.Enum):
    """What makes a payload unusable as a job."""

    NOT_JSON = "not JSON"
    NOT_AN_OBJECT = "not a JSON object"
    NO_CLASS = "no class"
    NO_QUEUE = "no queue"
    NO_JID = "no jid"
    BAD_FIELD = "a field of the wrong type"


@attrs.frozen(kw_only=True)
class PayloadError:
    """Why a payload couldn't be read as a job."""

    problem: PayloadProblem
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.problem.value}: {self.detail}" if self.detail else self.problem.value


# The payload key of each record field that isn't spelled the same.
_RENAMED = {"class_name": "class"}
_FIELDS = {_RENAMED.get(field.name, field.name): field.name for field in attrs.fields(JobRecord)}
_FIELDS.pop("extra")
_NUMBER = (int, float)
_OPTIONAL_NUMBER = (int, float, type(None))
_OPTIONAL_COUNT = (int, type(None))
_OPTIONAL_TEXT = (str, type(None))
#: The JSON types each checked field may hold (checked by hand: cheap enough
#: for every job fetched, and the message names the field).
_TYPES: dict[str, tuple[type, ...]] = {
    "args": (list,),
    "created_at": _NUMBER,
    "retry": (bool, int),
    "enqueued_at": _OPTIONAL_NUMBER,
    "failed_at": _OPTIONAL_NUMBER,
    "retried_at": _OPTIONAL_NUMBER,
    "retry_count": _OPTIONAL_COUNT,
    "interrupted_count": _OPTIONAL_COUNT,
    "expires_at": _OPTIONAL_NUMBER,
    "error_class": _OPTIONAL_TEXT,
    "error_message": _OPTIONAL_TEXT,
    "error_backtrace": _OPTIONAL_TEXT,
}


def _record_of(obj: dict[str, Any]) -> JobRecord:
    # Runs for every job fetched: plain loops, no generic structuring.
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in obj.items():
        name = _FIELDS.get(key)
        if name is None:
            extra[key] = value
            continue
        types = _TYPES.get(name)
        if types is not None and not _fits(value, types):
            raise TypeError(f"{name} is a {type(value).__name__}")
        known[name] = value
    known["args"] = tuple(known.get("args", ()))
    return JobRecord(**known, extra=extra)


def _fits(value: object, types: tuple[type, ...]) -> bool:
    # A JSON `true` is a bool, which isinstance would let pass for an int.
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


# The payload keys after "class" and "args", and one getter for all their
# values: a single C call instead of a getattr per field, once per enqueue.
_OTHER_KEYS = tuple(key for key in _FIELDS if key not in ("class", "args"))
_OTHER_VALUES = operator.attrgetter(*(_FIELDS[key] for key in _OTHER_KEYS))


def _unstructure_job(job: JobRecord) -> dict[str, JSON]:
    obj: dict[str, JSON] = {"class": job.class_name, "args": list(job.args)}
    for key, value in zip(_OTHER_KEYS, _OTHER_VALUES(job), strict=True):
        if value is not None:
            obj[key] = value
    obj.update(job.extra)
    return obj


def encode(job: JobRecord, *, enqueued_at: float | None = None) -> str:
    """The JSON payload stored in Redis for `job` (absent optional fields are left out),
    stamped `enqueued_at` if given (as it goes onto a queue)."""
    obj = _unstructure_job(job)
    if enqueued_at is not None:
        obj["enqueued_at"] = enqueued_at
    return compact_json(obj)


def to_dict(job: JobRecord) -> dict[str, JSON]:
    """The payload of `job` as a fresh dict (what user hooks are handed)."""
    return _unstructure_job(job)


def decode(raw: str | bytes) -> Result[JobRecord, PayloadError]:
    """The job a payload holds, or what is wrong with it."""
    try:
        # UnicodeDecodeError is a ValueError: bytes that aren't UTF-8 aren't JSON.
        obj = _DECODER.decode(raw.decode() if isinstance(raw, bytes) else raw)
    except (ValueError, RecursionError) as error:  # RecursionError: nested too deep
        return Failure(PayloadError(problem=PayloadProblem.NOT_JSON, detail=str(error)))
    return from_dict(obj)


def _refuse_constant(name: str) -> float:
    # NaN and the infinities aren't JSON; accepted, they couldn't be encoded again.
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a float")
    return value


# Built once: `json.loads` with hooks builds a decoder per call.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


_REQUIRED = (
    ("class", PayloadProblem.NO_CLASS),
    ("queue", PayloadProblem.NO_QUEUE),
    ("jid", PayloadProblem.NO_JID),
)


def from_dict(obj: object) -> Result[JobRecord, PayloadError]:
    """The job a decoded payload holds, or what is wrong with it."""
    if not isinstance(obj, dict):
        return Failure(
            PayloadError(problem=PayloadProblem.NOT_AN_OBJECT, detail=type(obj).__name__)
        )
    for key, problem in _REQUIRED:
        value = obj.get(key)
        if not value or not isinstance(value, str):
            return Failure(PayloadError(problem=problem))
    try:
        return Success(_record_of(obj))
    except TypeError as error:
        return Failure(PayloadError(problem=PayloadProblem.BAD_FIELD, detail=str(error)))


UNPARSEABLE_CLASS = "unparseable_job"


def unparseable_entry(raw: bytes, error: PayloadError, *, jid: str, now: float) -> str:
    """The dead-set entry for a payload that isn't a job: it keeps the raw text.

    It has no queue, so it can't be put back on one by mistake.
    """
    entry: dict[str, JSON] = {
        "class": UNPARSEABLE_CLASS,
        "jid": jid,
        "args": [],
        "raw": raw.decode("utf-8", "backslashreplace"),
        "error_class": "UnparseablePayload",
        "error_message": f"the payload is {error}",
        "failed_at": now,
        "retry_count": 0,
    }
    return compact_json(entry)
