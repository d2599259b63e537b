"""The work running now, as "Running now" and the job page show it: each thread's job, how
long it has run against its time limit, and whether its process still answers.

A work record is whatever the process's last heartbeat wrote (JSON per
thread); fields are read defensively: a record without `run_at` has no
elapsed time, one without a numeric `timeout` has no limit.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from cogworker.app.web.entries import JobView, seconds


@attrs.frozen(kw_only=True)
class Work:
    """One thread's current job, as its process's last heartbeat said."""

    identity: str
    thread: str
    view: JobView
    run_at: float | None
    #: The job's time limit in seconds, if the record names one.
    timeout: float | None
    #: Seconds it has run, as of the dashboard's `now` (None: no start time recorded).
    elapsed: float | None
    #: Its process's heartbeat is stale or gone: killed or frozen, not running this job.
    unresponsive: bool

    @property
    def overdue(self) -> bool:
        """Whether it has run past its time limit."""
        return self.timeout is not None and self.elapsed is not None and self.elapsed > self.timeout

    @property
    def limit_percent(self) -> int:
        """Elapsed time as a share of the limit, 0..100 (0 without a limit)."""
        if not self.timeout or self.elapsed is None:
            return 0
        return min(100, round(self.elapsed / self.timeout * 100))


def work_of(identity: str, thread: str, record: Mapping[str, Any], now: float, *,
            unresponsive: bool) -> Work:  # fmt: skip
    """The `Work` of one thread's record."""
    run_at = seconds(record.get("run_at"))
    view = JobView.of(json.dumps(record).encode())
    return Work(
        identity=identity,
        thread=thread,
        view=view,
        run_at=run_at,
        timeout=view.timeout,
        elapsed=None if run_at is None else max(0.0, now - run_at),
        unresponsive=unresponsive,
    )


def work_rows(
    running: Mapping[str, Mapping[str, Mapping[str, Any]]],
    now: float,
    unresponsive: Collection[str],
) -> list[Work]:
    """Every thread's work, by process then thread; `unresponsive`: the processes whose
    heartbeat is stale or gone."""
    return [
        work_of(identity, thread, record, now, unresponsive=identity in unresponsive)
        for identity, threads in running.items()
        for thread, record in sorted(threads.items())
    ]
