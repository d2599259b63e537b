"""Periodic jobs: when their ticks come due, which ones run after a gap, and the stored schedule.

Everything that decides about ticks lives in this module; the periodic
manager asks `due_ticks` with the stored last tick and `now`, then claims
what it returns, oldest first.  The rules:

* An expression has 5 fields (minute hour day-of-month month day-of-week),
  6 with the seconds first (``*/10 * * * * *``: every ten seconds), or is an
  alias such as ``@hourly``.  Ticks are computed in the job's time zone:
  ``0 9 * * *`` in Europe/Berlin is 09:00 Berlin time, summer and winter.
* The ticks due are those after the last one handled, up to `now`.  The
  latest of them is *on time* while it is at most `MAX_LATENESS` seconds
  old; every other one was *missed* (nobody looked when it came due: the
  workers were down, or Redis was away).
* An on-time tick runs, unless the job's previous run is still running:
  then it is skipped (`RUN`).
* Of the missed ticks, the catch-up mode keeps none, the last one, or the
  latest `limit`; they run oldest first, each waiting for the run before it
  to end (`CATCH_UP`).  The others are dropped: when nothing else is due,
  the latest dropped one is marked as handled (`DROP`), so the next look
  starts after it.

Times are unix timestamps; a time zone comes in as a `tzinfo` (the shell
resolves names).  croniter is only ever iterated forwards: its backward
iteration disagrees with the forward one around some DST changes.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal, TypeAlias, get_args

import attrs

from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON

CatchUp: TypeAlias = Literal["none", "last", "all"]
CATCH_UP_MODES: tuple[str, ...] = get_args(CatchUp)

TickAction: TypeAlias = Literal["run", "catch_up", "drop"]
RUN: TickAction = "run"
CATCH_UP: TickAction = "catch_up"
DROP: TickAction = "drop"

#: The latest tick due is still on time (not missed) while at most this old.
MAX_LATENESS = 60.0
#: The first window looked at, backwards from `now`, for the latest ticks; it doubles.
_FIRST_SPAN = 64.0
#: Where `problem` tries an expression out: one that never comes due fails there.
_REFERENCE = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


def problem(expression: str) -> str | None:
    """Why `expression` can't be a periodic job's schedule, or None if it can."""
    fields = expression.split()
    is_alias = len(fields) == 1 and fields[0].startswith("@")
    if len(fields) not in (5, 6) and not is_alias:
        return (
            "expected 5 fields (minute hour day month weekday), "
            "6 with the seconds first, or an alias such as @hourly"
        )
    from croniter import CroniterBadDateError  # see _ticks: imported on first use

    try:
        _ticks(expression, _REFERENCE.timestamp(), dt.UTC).__next__()
    except CroniterBadDateError:
        return "it never comes due"
    except ValueError as error:  # croniter's errors are ValueErrors
        return str(error) or type(error).__name__
    return None


def next_tick(expression: str, tz: dt.tzinfo, after: float) -> float:
    """The first tick of `expression` (in `tz`) strictly after `after`."""
    return next(_ticks(expression, after, tz))


def ticks_between(expression: str, tz: dt.tzinfo, after: float, until: float) -> Iterator[float]:
    """The ticks in (`after`, `until`], oldest first."""
    for tick in _ticks(expression, after, tz):
        if tick > until:
            return
        yield tick


def latest_ticks(
    expression: str, tz: dt.tzinfo, *, since: float, now: float, count: int
) -> list[float]:
    """Up to `count` of the latest ticks in (`since`, `now`], newest first.

    Looks back over a window that doubles until it holds `count` ticks or
    reaches `since`, so a long gap costs a few windows, not every tick in it.
    """
    span = _FIRST_SPAN
    while True:
        start = max(since, now - span)
        found = list(ticks_between(expression, tz, start, now))
        if len(found) >= count or start == since:
            return found[::-1][:count]
        span *= 2


@attrs.frozen(kw_only=True)
class Due:
    """A tick to claim, and what to do with it (see the module docstring)."""

    at: float
    action: TickAction


def kept_missed(catch_up: CatchUp, limit: int) -> int:
    """How many missed ticks a catch-up mode runs: none, the last one, or up to `limit`."""
    return {"none": 0, "last": 1, "all": limit}[catch_up]


def due_ticks(
    expression: str,
    tz: dt.tzinfo,
    *,
    since: float,
    now: float,
    catch_up: CatchUp,
    limit: int,
) -> tuple[Due, ...]:
    """The ticks of (`since`, `now`] to claim now, oldest first (see the module docstring)."""
    keep = kept_missed(catch_up, limit)
    # One more than could be kept, to see whether any is dropped.
    latest = latest_ticks(expression, tz, since=since, now=now, count=keep + 2)
    if not latest:
        return ()
    on_time = now - latest[0] <= MAX_LATENESS
    missed = latest[1:] if on_time else latest
    kept, dropped = missed[:keep], missed[keep:]
    due = [Due(at=tick, action=CATCH_UP) for tick in reversed(kept)]
    if on_time:
        due.append(Due(at=latest[0], action=RUN))
    if not due and dropped:
        due.append(Due(at=dropped[0], action=DROP))
    return tuple(due)


def last_due(expression: str, tz: dt.tzinfo, at: float, *, catch_up: CatchUp, limit: int) -> float:
    """The latest time the tick `at` can be due: after it, never, whatever the stored last
    tick (a look after it drops the tick).

    A tick is due while it is the latest, on time, or one of the `kept_missed`
    latest missed ones.  With k kept: once k ticks came after it, it is kept only
    while the latest of them is on time; once k + 1 came, never.  (inf: the
    expression stops coming due before.)
    """
    keep = kept_missed(catch_up, limit)
    try:
        later = list(itertools.islice(_ticks(expression, at, tz), keep + 1))
    except ValueError:  # croniter's "no such date": the expression stops coming due
        return math.inf
    kept_until = (later[keep - 1] if keep else at) + MAX_LATENESS
    return min(kept_until, later[keep])


def _ticks(expression: str, after: float, tz: dt.tzinfo) -> Iterator[float]:
    # Imported on first use: a worker without periodic jobs never pays
    # croniter's and dateutil's memory and start-up (bench/README.md).
    from croniter import croniter

    # Ticks fall on whole seconds, so those after `after` are those after its
    # whole second; and a datetime would round 0.9999998 up to the next second.
    start = dt.datetime.fromtimestamp(math.floor(after), tz)
    iterator = croniter(expression, start, second_at_beginning=True)
    while True:
        yield float(iterator.get_next(float))


# --- The stored schedule -------------------------------------------------------


@attrs.frozen(kw_only=True)
class ScheduleEntry:
    """A periodic job as the schedule in Redis holds it (and the dashboard shows it)."""

    name: str
    cron: str
    #: The time zone's name (IANA, e.g. "Europe/Berlin").
    tz: str
    class_name: str
    queue: str
    retry: bool | int
    args: tuple[JSON, ...] = ()
    #: When it joined the schedule: ticks count from here until one is handled.
    added_at: float
    #: The last tick handled (run, skipped or dropped): the next look starts after it.
    last_tick: float | None = None
    #: The last tick that enqueued a run, and that run's jid.
    last_run: float | None = None
    last_jid: str | None = None
    #: The next tick, as of the latest look.
    next_run: float | None = None
    #: Payload keys its job class's options add to every run (unique lock, status tracking).
    options: Mapping[str, JSON] = attrs.field(factory=dict)

    @property
    def since(self) -> float:
        """The time after which its ticks are still to be handled."""
        return self.last_tick if self.last_tick is not None else self.added_at

    def run(self, *, jid: str, now: float, extra: Mapping[str, JSON] | None = None) -> JobRecord:
        """A run of this job, enqueued `now` (`extra`: payload keys of the caller's)."""
        return JobRecord(
            class_name=self.class_name,
            queue=self.queue,
            jid=jid,
            args=self.args,
            retry=self.retry,
            created_at=now,
            enqueued_at=now,
            extra={**self.options, **(extra or {})},
        )


def handled(entry: ScheduleEntry, due: Due, *, jid: str | None, next_run: float) -> ScheduleEntry:
    """`entry` once `due` is handled: run as `jid`, or (None) skipped or dropped."""
    seen = attrs.evolve(entry, last_tick=due.at, next_run=next_run)
    return seen if jid is None else ran_at(seen, due.at, jid)


def ran_at(entry: ScheduleEntry, at: float, jid: str) -> ScheduleEntry:
    """`entry` knowing its tick `at` enqueued the run `jid`, whichever process enqueued it."""
    return attrs.evolve(entry, last_run=at, last_jid=jid)


def merged(
    stored: Mapping[str, ScheduleEntry], configured: Iterable[ScheduleEntry], *, replace: bool
) -> dict[str, ScheduleEntry]:
    """The schedule a process starts with: its configured entries, each keeping what
    the stored one knew of its runs, plus (unless `replace`) the other stored entries."""
    schedule = {} if replace else dict(stored)
    for entry in configured:
        old = stored.get(entry.name)
        schedule[entry.name] = (
            entry
            if old is None
            else attrs.evolve(
                entry,
                added_at=old.added_at,
                last_tick=old.last_tick,
                last_run=old.last_run,
                last_jid=old.last_jid,
            )
        )
    return schedule
