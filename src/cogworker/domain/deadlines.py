"""Time limits of running jobs: which runs are overdue, and how far.

A run with a limit (its class's `timeout=`, else `Config.default_timeout`)
is *soft* overdue once it has run that many seconds: `JobTimeoutError` is
raised into it, once.  It is *hard* overdue once it is still running
`grace` seconds after that interrupt (a sync job blocked in C code never
sees the exception): its process files the failure for it and exits, to be
replaced.  The grace counts from the interrupt, not from the limit, so a
watchdog that was late never skips the soft step.

Pure: `now` is a parameter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, TypeAlias

import attrs

#: How a run was timed out: told at its limit, or filed for once it ignored that.
TimedOut: TypeAlias = Literal["soft", "hard"]


@attrs.frozen(kw_only=True)
class LimitedRun:
    """A running job that has a time limit."""

    #: What runs it (a processor thread's name, "loop:JID" for an async job).
    runner: str
    jid: str
    started_at: float
    #: Its limit in seconds.
    timeout: float

    @property
    def soft_deadline(self) -> float:
        """When `JobTimeoutError` is raised into it."""
        return self.started_at + self.timeout


@attrs.frozen(kw_only=True)
class Overdue:
    """What a look at the running jobs at `now` finds to do."""

    #: Past their limit and not told yet: raise `JobTimeoutError` into them.
    soft: tuple[LimitedRun, ...] = ()
    #: Told, and still running `grace` seconds later: file the failure, abandon the run.
    hard: tuple[LimitedRun, ...] = ()


def limit_of(class_timeout: float | None, default_timeout: float | None) -> float | None:
    """A run's limit: its class's, else the configured default (None: no limit)."""
    return class_timeout if class_timeout is not None else default_timeout


def overdue(
    running: Iterable[LimitedRun],
    told_at: Mapping[str, float],
    *,
    grace: float,
    now: float,
) -> Overdue:
    """The runs to interrupt and the runs to abandon at `now`; `told_at`: when each run
    (by jid) had `JobTimeoutError` raised into it."""
    soft: list[LimitedRun] = []
    hard: list[LimitedRun] = []
    for run in running:
        told = told_at.get(run.jid)
        if told is None:
            if now >= run.soft_deadline:
                soft.append(run)
        elif now >= told + grace:
            hard.append(run)
    return Overdue(soft=tuple(soft), hard=tuple(hard))


def next_deadline(
    running: Iterable[LimitedRun], told_at: Mapping[str, float], *, grace: float
) -> float | None:
    """When the next of these runs becomes overdue (soft or hard); None for no run."""
    deadlines = [
        run.soft_deadline if run.jid not in told_at else told_at[run.jid] + grace for run in running
    ]
    return min(deadlines, default=None)
