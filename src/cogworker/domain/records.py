"""What is recorded about runs: the attempts log (retry timeline) and the run history."""

from __future__ import annotations

import math
from json.encoder import encode_basestring_ascii as _quoted

import attrs

from cogworker.domain.deadlines import TimedOut
from cogworker.domain.json_values import compact_json


@attrs.frozen(kw_only=True)
class AttemptRecord:
    """One failed attempt, as the dashboard's retry timeline shows it."""

    #: The job's retry_count after this failure (1 for the first).
    attempt: int
    failed_at: float
    error_class: str
    error_message: str
    #: "retrying", "dead", "killed" or "discarded".
    outcome: str
    #: "soft" or "hard" when the attempt ran past its time limit (stored only then).
    timed_out: TimedOut | None = None


@attrs.frozen(kw_only=True)
class RunRecord:
    """One run of a job: when, where, how long, and how it ended."""

    jid: str
    class_name: str
    queue: str
    started_at: float
    ended_at: float
    #: "success", or the failed attempt's outcome ("retrying", "dead", ...).
    outcome: str
    process: str
    error: str | None = None
    #: "soft" or "hard" when the run went past its time limit (stored only then).
    timed_out: TimedOut | None = None

    @property
    def duration(self) -> float:
        """Seconds the run took."""
        return self.ended_at - self.started_at


def to_json(record: AttemptRecord | RunRecord) -> str:
    """The record as stored (compact JSON; a run also carries its duration)."""
    if isinstance(record, RunRecord) and _finite(record.started_at, record.ended_at):
        return _run_json(record)
    # Every field is a plain value: no need for attrs.asdict's generic walk.
    fields = {name: getattr(record, name) for name in _NAMES[type(record)]}
    if record.timed_out is None:
        del fields["timed_out"]
    if isinstance(record, RunRecord):
        fields["duration"] = round(record.duration, 6)
    return compact_json(fields)


def _run_json(run: RunRecord) -> str:
    # Every job run writes one, so it is formatted directly: the generic
    # encoder's per-call set-up outweighs this small record.
    # The same text: json's own string quoting, and float repr as json uses it.
    error = "null" if run.error is None else _quoted(run.error)
    timed_out = "" if run.timed_out is None else f',"timed_out":{_quoted(run.timed_out)}'
    return (
        f'{{"jid":{_quoted(run.jid)},"class_name":{_quoted(run.class_name)},'
        f'"queue":{_quoted(run.queue)},"started_at":{run.started_at!r},'
        f'"ended_at":{run.ended_at!r},"outcome":{_quoted(run.outcome)},'
        f'"process":{_quoted(run.process)},"error":{error}{timed_out},'
        f'"duration":{round(run.duration, 6)!r}}}'
    )


def _finite(*values: float) -> bool:
    # NaN and the infinities have no JSON text: the generic encoder refuses them.
    return all(map(math.isfinite, values))


_NAMES = {
    kind: tuple(field.name for field in attrs.fields(kind)) for kind in (AttemptRecord, RunRecord)
}
