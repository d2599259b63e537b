"""Job results: what a job keeps for a waiter when it ends for good, and for how long.

A job enqueued with `keep_result` (seconds; its class's option or the
client's `Config.keep_result`) carries it in its payload.  Its final
settlement stores one record: its return value (a success), or how it
ended otherwise (dead, killed, discarded, cancelled, expired) with the
error's class and message.  A retry is not final: nothing is stored.

The record is kept `keep` seconds.  A waiter finds the job's queue through
the jid index, which must point at it while the job may still end (from its
push through every retry's wait, `WAIT_ALLOWANCE` beyond its due time) and
no longer than its record is kept once it ended (`index_ttl_*`).

Pure: no I/O, no clock (`now` is a parameter).
"""

from __future__ import annotations

import json
import math
from typing import Literal, TypeAlias

import attrs
from returns.result import Failure, Result, Success

from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON, compact_json, first_non_json, is_json_native

#: The payload key holding a job's `keep_result` (seconds).
PAYLOAD_KEY = "keep_result"
#: The largest result kept by default (bytes of its JSON): `Config.max_result_bytes`.
DEFAULT_MAX_BYTES = 1024 * 1024
#: How long the jid index outlives a waiting job's due time (a queue's backlog, a run):
#: a job still unended by then is "not found" to a waiter (its record is found once written).
WAIT_ALLOWANCE = 7 * 86_400

#: How a job ended for good, in the words of the attempts log ("success" as run history says).
FinalOutcome: TypeAlias = Literal["success", "dead", "killed", "discarded", "cancelled", "expired"]
_FINAL: tuple[FinalOutcome, ...] = (
    "success", "dead", "killed", "discarded", "cancelled", "expired",
)  # fmt: skip


@attrs.frozen(kw_only=True)
class Stored:
    """A job's stored result: its value (a success), or how it ended and why."""

    outcome: FinalOutcome
    value: JSON = None
    error_class: str = ""
    error_message: str = ""


@attrs.frozen(kw_only=True)
class Kept:
    """What a settlement of a job keeping its result writes: the record (None while it
    isn't final: a retry), in its queue's slot, kept `keep` seconds, and how long the jid
    index must still point at `queue`."""

    queue: str
    record: str | None
    keep: int
    index_ttl: int


def keep_of(job: JobRecord) -> int | None:
    """The whole seconds `job` keeps its result (rounded up), or None: it keeps none."""
    keep = job.extra.get(PAYLOAD_KEY)
    if isinstance(keep, bool) or not isinstance(keep, (int, float)):
        return None
    if not math.isfinite(keep) or keep <= 0:
        return None
    return math.ceil(keep)


def encoded_value(value: object, max_bytes: int) -> Result[str, str]:
    """A returned value as the JSON a result keeps, or why it can't be kept: not
    JSON-native (as with arguments), or larger than `max_bytes`."""
    if not is_json_native(value):
        found = first_non_json(value, "the return value")
        where, kind = found or ("the return value", type(value).__name__)
        return Failure(
            "a result must be JSON-native (str, int, float, bool, None, list, dict with str "
            f"keys); {where} is {kind}"
        )
    text = compact_json(value)
    size = len(text.encode())
    if size > max_bytes:
        return Failure(
            f"the return value is {size} bytes of JSON, more than the {max_bytes} a result "
            "may hold (Config.max_result_bytes)"
        )
    return Success(text)


def success_record(value_json: str) -> str:
    """The record of a success whose value is `value_json` (as `encoded_value` made it)."""
    return '{"outcome":"success","value":' + value_json + "}"


def ended_record(outcome: FinalOutcome, error_class: str, error_message: str) -> str:
    """The record of a job that ended for good without a value."""
    record = {"outcome": outcome, "error_class": error_class, "error_message": error_message}
    return compact_json(record)


def parse_record(text: bytes | str) -> Stored | None:
    """A stored record, or None if it isn't one (written by hand, say)."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or obj.get("outcome") not in _FINAL:
        return None
    error_class, error_message = obj.get("error_class", ""), obj.get("error_message", "")
    if not isinstance(error_class, str) or not isinstance(error_message, str):
        return None
    return Stored(
        outcome=obj["outcome"],
        value=obj.get("value"),
        error_class=error_class,
        error_message=error_message,
    )


def final(job: JobRecord, record: str) -> Kept | None:
    """What ending `job` for good with `record` writes; None if it keeps no result."""
    keep = keep_of(job)
    if keep is None:
        return None
    return Kept(queue=job.queue, record=record, keep=keep, index_ttl=keep)


def buried(job: JobRecord) -> Kept | None:
    """What filing `job` in dead outside a settlement writes (the reconciler burying a job
    whose process kept dying under it, or kept stopping): the error it is filed with."""
    return final(job, ended_record("dead", job.error_class or "", job.error_message or ""))


def removed_by_hand(job: JobRecord, outcome: Literal["killed", "discarded"]) -> Kept | None:
    """What removing `job` by hand writes (a kill or delete from the dashboard or the CLI,
    a queue's clear): it ended there, filed in dead or thrown away."""
    return final(job, ended_record(outcome, "", f"{outcome} by hand"))


def pending(job: JobRecord, retry_at: float, now: float) -> Kept | None:
    """What a retry of `job` at `retry_at` writes: no record, the index kept past its wait."""
    keep = keep_of(job)
    if keep is None:
        return None
    ttl = index_ttl_at_push(keep, retry_at, now)
    return Kept(queue=job.queue, record=None, keep=keep, index_ttl=ttl)


def index_ttl_at_push(keep: int, run_at: float | None, now: float) -> int:
    """How long a job's jid index lasts from its push at `now`, due at `run_at` (None:
    now): its wait, `WAIT_ALLOWANCE` to be run, then its result's `keep`."""
    wait = 0 if run_at is None else max(0, math.ceil(run_at - now))
    return wait + WAIT_ALLOWANCE + keep
