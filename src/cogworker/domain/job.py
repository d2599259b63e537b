"""The job record: one unit of work as it travels through Redis.

A job is stored as a JSON object (see `payload`); this record is that object
once read.  Keys cogworker doesn't know (added by middleware, or by a newer
version) are kept in `extra` and written back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from cogworker.domain.json_values import JSON

DEFAULT_QUEUE = "default"


@attrs.frozen(kw_only=True)
class JobRecord:
    """A job: what to run (`class_name` with `args`) and what happened to it so far."""

    class_name: str
    queue: str
    jid: str
    args: tuple[JSON, ...] = ()
    retry: bool | int = True
    created_at: float = 0.0
    enqueued_at: float | None = None
    #: Retries made so far; absent until the first failure (then 1).
    retry_count: int | None = None
    error_class: str | None = None
    error_message: str | None = None
    error_backtrace: str | None = None
    failed_at: float | None = None
    retried_at: float | None = None
    #: Times writing this job's failure outcome failed (Redis away).
    interrupted_count: int | None = None
    #: When the job expires if it hasn't started by then (unix time); None: never.
    expires_at: float | None = None
    extra: Mapping[str, JSON] = attrs.field(factory=dict)

    @property
    def retries_made(self) -> int:
        """Retries made before the current attempt (0 for a job that never failed)."""
        return self.retry_count or 0


@attrs.frozen(kw_only=True)
class ErrorRecord:
    """A live exception as the core sees it: its type name, message and traceback text."""

    class_name: str
    message: str
    backtrace: str = ""

    @property
    def summary(self) -> str:
        """`Type: message`, the type without its module, as log lines and run history show it."""
        return f"{self.class_name.rpartition('.')[2]}: {self.message}"


def with_failure(job: JobRecord, error: ErrorRecord, *, failed_at: float) -> JobRecord:
    """`job` after one more failed attempt: the count goes up and the error is kept.

    `failed_at` keeps the time of the first failure (as Sidekiq does) and
    `retried_at` the latest one, so the dashboard can show both.
    """
    return attrs.evolve(
        job,
        retry_count=job.retries_made + 1,
        error_class=error.class_name,
        error_message=error.message,
        error_backtrace=error.backtrace or None,
        failed_at=job.failed_at if job.failed_at is not None else failed_at,
        retried_at=failed_at if job.failed_at is not None else job.retried_at,
    )
