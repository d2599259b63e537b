"""What is recorded about runs: the attempts log (retry timeline) and the run history."""

from __future__ import annotations

import attrs

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

    @property
    def duration(self) -> float:
        """Seconds the run took."""
        return self.ended_at - self.started_at


def to_json(record: AttemptRecord | RunRecord) -> str:
    """The record as stored (compact JSON; a run also carries its duration)."""
    # Every field is a plain value: no need for attrs.asdict's generic walk.
    fields = {name: getattr(record, name) for name in _NAMES[type(record)]}
    if isinstance(record, RunRecord):
        fields["duration"] = round(record.duration, 6)
    return compact_json(fields)


_NAMES = {
    kind: tuple(field.name for field in attrs.fields(kind)) for kind in (AttemptRecord, RunRecord)
}
