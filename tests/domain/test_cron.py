"""Cron ticks, the catch-up decision and the stored schedule's merge (domain/cron.py).

The strategies live here rather than in `strategies.py`: they are cron
expressions and schedule entries, used by this module only.
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import cron
from cogworker.domain.cron import CATCH_UP, DROP, RUN, Due, ScheduleEntry

# --- strategies -------------------------------------------------------------------

SECONDS = st.sampled_from(["0", "30", "*/10", "*/15", "5,35", "*/7"])
MINUTES = st.sampled_from(["*", "*/5", "0", "15,45", "*/20", "3-7"])
HOURS = st.sampled_from(["*", "*/2", "9", "0-5", "1,13"])
DAYS = st.sampled_from(["*", "1", "*/3", "15"])
MONTHS = st.sampled_from(["*", "*/2", "1-6"])
WEEKDAYS = st.sampled_from(["*", "1-5", "0", "mon,fri"])
ZONES = st.sampled_from(
    ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
).map(zoneinfo.ZoneInfo)
CATCH_UPS = st.sampled_from(["none", "last", "all"])

five_fields = st.builds(lambda *fields: " ".join(fields), MINUTES, HOURS, DAYS, MONTHS, WEEKDAYS)
six_fields = st.builds(lambda second, rest: f"{second} {rest}", SECONDS, five_fields)
expressions = st.one_of(
    five_fields, six_fields, st.sampled_from(["@hourly", "@daily", "@weekly", "* * * * * *"])
)

#: Clock changes of the zones above in 2024 (UTC): Europe, the US, Lord Howe (30 min).
DST_CHANGES = [
    dt.datetime(2024, 3, 31, 1, tzinfo=dt.UTC),
    dt.datetime(2024, 10, 27, 1, tzinfo=dt.UTC),
    dt.datetime(2024, 3, 10, 7, tzinfo=dt.UTC),
    dt.datetime(2024, 11, 3, 6, tzinfo=dt.UTC),
    dt.datetime(2024, 4, 6, 15, tzinfo=dt.UTC),
    dt.datetime(2024, 10, 5, 15, 30, tzinfo=dt.UTC),
]
#: 2020-01-01 to 2035-01-01, whole seconds (cron ticks) or not, often just before a clock change.
instants = st.one_of(
    st.integers(1_577_836_800, 2_051_222_400).map(float),
    st.floats(1_577_836_800, 2_051_222_400, allow_nan=False),
    st.sampled_from(DST_CHANGES).flatmap(
        lambda change: st.integers(-6 * 3600, 3600).map(lambda s: change.timestamp() + s)
    ),
)
#: Up to 6 hours: a few thousand ticks at most for the expressions above.
gaps = st.one_of(st.integers(0, 6 * 3600).map(float), st.floats(0, 6 * 3600, allow_nan=False))


def reference_due(
    expression: str, tz: dt.tzinfo, since: float, now: float, catch_up: cron.CatchUp, limit: int
) -> tuple[Due, ...]:
    """The catch-up rules applied to every tick of (since, now], listed one by one."""
    ticks = list(cron.ticks_between(expression, tz, since, now))
    if not ticks:
        return ()
    on_time = now - ticks[-1] <= cron.MAX_LATENESS
    missed = ticks[:-1] if on_time else ticks
    keep = {"none": 0, "last": 1, "all": limit}[catch_up]
    kept = missed[max(0, len(missed) - keep) :] if keep else []
    dropped = missed[: len(missed) - len(kept)]
    due = [Due(at=tick, action=CATCH_UP) for tick in kept]
    if on_time:
        due.append(Due(at=ticks[-1], action=RUN))
    if not due and dropped:
        due.append(Due(at=dropped[-1], action=DROP))
    return tuple(due)


# --- expressions --------------------------------------------------------------------


@given(expressions)
def test_generated_expressions_are_accepted(expression: str) -> None:
    """Every expression of the strategies (5 fields, 6 with seconds, aliases) is valid."""
    assert cron.problem(expression) is None


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("* * * *", "expected 5 fields"),
        ("* * * * * * *", "expected 5 fields"),
        ("", "expected 5 fields"),
        ("0 25 * * *", "out of range"),
        ("*/0 * * * *", "not acceptable"),
        ("a b c d e", "not acceptable"),
        ("0 0 30 2 *", "never comes due"),
        ("@reboot", "columns"),
    ],
)
def test_bad_expressions_say_what_is_wrong(expression: str, says: str) -> None:
    """A malformed, out-of-range or never-due expression gets a reason, not a crash."""
    problem = cron.problem(expression)
    assert problem is not None
    assert says in problem


# --- ticks ------------------------------------------------------------------------------


@given(st.sampled_from([1, 2, 5, 10, 15, 30]), instants)
def test_next_tick_of_every_k_seconds_is_the_next_multiple_of_k(k: int, after: float) -> None:
    """In UTC, `*/k * * * * *` ticks at the multiples of k seconds (k dividing 60)."""
    assert cron.next_tick(f"*/{k} * * * * *", dt.UTC, after) == (math.floor(after / k) + 1) * k


@given(instants)
def test_ticks_are_read_in_the_time_zone(after: float) -> None:
    """`0 9 * * *` in Asia/Kolkata (UTC+5:30, no DST) ticks at 03:30 UTC."""
    tick = cron.next_tick("0 9 * * *", zoneinfo.ZoneInfo("Asia/Kolkata"), after)
    moment = dt.datetime.fromtimestamp(tick, dt.UTC)
    assert (moment.hour, moment.minute, moment.second) == (3, 30, 0)
    assert after < tick <= after + 86_400


@given(expressions, ZONES, instants, gaps)
def test_ticks_between_are_increasing_and_inside_the_interval(
    expression: str, tz: dt.tzinfo, since: float, gap: float
) -> None:
    """Ticks come strictly increasing, each in (since, until], the first the next after since."""
    ticks = list(cron.ticks_between(expression, tz, since, since + gap))
    assert all(since < tick <= since + gap for tick in ticks)
    assert ticks == sorted(set(ticks))
    if ticks:
        assert cron.next_tick(expression, tz, since) == ticks[0]


@given(expressions, ZONES, instants, gaps, st.integers(1, 12))
def test_latest_ticks_are_the_tail_of_all_ticks(
    expression: str, tz: dt.tzinfo, since: float, gap: float, count: int
) -> None:
    """Looking back in growing windows finds the same latest ticks as listing them all."""
    every = list(cron.ticks_between(expression, tz, since, since + gap))
    latest = cron.latest_ticks(expression, tz, since=since, now=since + gap, count=count)
    assert latest == every[::-1][:count]


# --- the catch-up decision ----------------------------------------------------------


@given(expressions, ZONES, instants, gaps, CATCH_UPS, st.integers(1, 12))
def test_due_ticks_follow_the_catch_up_rules(
    expression: str, tz: dt.tzinfo, since: float, gap: float, catch_up: cron.CatchUp, limit: int
) -> None:
    """`due_ticks` gives what the rules give when every tick of the gap is listed."""
    now = since + gap
    got = cron.due_ticks(expression, tz, since=since, now=now, catch_up=catch_up, limit=limit)
    assert got == reference_due(expression, tz, since, now, catch_up, limit)


@given(expressions, ZONES, instants, gaps, CATCH_UPS, st.integers(1, 12))
def test_due_ticks_are_ordered_bounded_and_inside_the_gap(
    expression: str, tz: dt.tzinfo, since: float, gap: float, catch_up: cron.CatchUp, limit: int
) -> None:
    """Oldest first, in (since, now]; at most one on-time run, last; catch-ups within the mode's
    bound; a drop only alone."""
    now = since + gap
    due = cron.due_ticks(expression, tz, since=since, now=now, catch_up=catch_up, limit=limit)
    assert [d.at for d in due] == sorted({d.at for d in due})
    assert all(since < d.at <= now for d in due)
    actions = [d.action for d in due]
    assert actions.count(RUN) <= 1
    assert RUN not in actions[:-1]
    assert actions.count(CATCH_UP) <= cron.kept_missed(catch_up, limit)
    assert DROP not in actions or actions == [DROP]
    if actions and actions[-1] == RUN:
        assert now - due[-1].at <= cron.MAX_LATENESS


@given(expressions, ZONES, instants, gaps, gaps, CATCH_UPS, st.integers(1, 12))
def test_a_tick_is_never_due_again_from_its_last_due_time(
    expression: str,
    tz: dt.tzinfo,
    after: float,
    before: float,
    later: float,
    catch_up: cron.CatchUp,
    limit: int,
) -> None:
    """After `last_due`, a tick is neither run nor caught up, whichever earlier tick was
    handled last (a claim kept that long can't be outlived by a look that runs the tick)."""
    at = cron.next_tick(expression, tz, after)
    now = cron.last_due(expression, tz, at, catch_up=catch_up, limit=limit) + later + 0.001
    since = at - 1 - before
    due = cron.due_ticks(expression, tz, since=since, now=now, catch_up=catch_up, limit=limit)
    assert at not in {d.at for d in due if d.action != DROP}


@pytest.mark.parametrize(("catch_up", "kept"), [("none", 0), ("last", 1), ("all", 3)])
def test_an_hourly_tick_is_due_until_the_last_kept_tick_after_it_is_late(
    catch_up: cron.CatchUp, kept: int
) -> None:
    """Hourly, catch-up limit 3: a tick is due (on time, or caught up) until the `kept`-th
    tick after it is no longer on time: hours, not the 10 minutes a claim was kept before."""
    tick = 1_699_999_200.0
    until = cron.last_due("0 * * * *", dt.UTC, tick, catch_up=catch_up, limit=3)
    assert until == tick + kept * 3600 + cron.MAX_LATENESS
    due = cron.due_ticks(
        "0 * * * *", dt.UTC, since=tick - 1, now=until - 1, catch_up=catch_up, limit=3
    )
    assert due[0] == Due(at=tick, action=RUN if kept == 0 else CATCH_UP)


def test_a_one_second_job_after_a_30_second_gap() -> None:
    """Every second, 30 s unattended: the current tick runs; "last" adds the one before it,
    "all" the latest `limit` missed ones, "none" nothing more."""
    now = 1_700_000_000.3
    since = now - 30

    def due(catch_up: cron.CatchUp) -> tuple[Due, ...]:
        return cron.due_ticks(
            "* * * * * *", dt.UTC, since=since, now=now, catch_up=catch_up, limit=3
        )

    assert due("none") == (Due(at=1_700_000_000.0, action=RUN),)
    assert due("last") == (Due(at=1_699_999_999.0, action=CATCH_UP), due("none")[0])
    assert [d.at for d in due("all")] == [
        1_699_999_997.0,
        1_699_999_998.0,
        1_699_999_999.0,
        now - 0.3,
    ]


def test_missed_ticks_with_none_are_dropped_through_the_latest() -> None:
    """Hourly, three days unattended, 'none': no run, the latest missed tick is marked handled."""
    now = 1_700_000_000.3
    due = cron.due_ticks(
        "0 * * * *", dt.UTC, since=now - 3 * 86_400, now=now, catch_up="none", limit=3
    )
    assert due == (Due(at=1_699_999_200.0, action=DROP),)


def test_a_tick_is_on_time_for_a_minute_at_most() -> None:
    """The latest tick runs on time up to MAX_LATENESS after it; later it counts as missed."""
    tick = 1_699_999_200.0
    late = cron.due_ticks(
        "0 * * * *", dt.UTC, since=tick - 1, now=tick + cron.MAX_LATENESS, catch_up="none", limit=1
    )
    too_late = cron.due_ticks(
        "0 * * * *",
        dt.UTC,
        since=tick - 1,
        now=tick + cron.MAX_LATENESS + 1,
        catch_up="none",
        limit=1,
    )
    assert late == (Due(at=tick, action=RUN),)
    assert too_late == (Due(at=tick, action=DROP),)


# --- the stored schedule ------------------------------------------------------------------

names = st.text(alphabet="abcdefgh-", min_size=1, max_size=6)
maybe_times = st.none() | st.integers(1_600_000_000, 1_800_000_000).map(float)


@st.composite
def schedule_entries(draw: st.DrawFn, name: str | None = None) -> ScheduleEntry:
    """An entry, with or without a past run."""
    return ScheduleEntry(
        name=name if name is not None else draw(names),
        cron=draw(expressions),
        tz=draw(st.sampled_from(["UTC", "Europe/Berlin"])),
        class_name=draw(st.sampled_from(["app.jobs.Cleanup", "app.jobs.Report"])),
        queue=draw(st.sampled_from(["default", "low"])),
        retry=draw(st.booleans() | st.integers(0, 25)),
        args=tuple(draw(st.lists(st.integers(), max_size=3))),
        added_at=draw(st.integers(1_500_000_000, 1_600_000_000).map(float)),
        last_tick=draw(maybe_times),
        last_run=draw(maybe_times),
        last_jid=draw(st.none() | st.just("0123abcd")),
        next_run=draw(maybe_times),
    )


@st.composite
def schedules(draw: st.DrawFn) -> dict[str, ScheduleEntry]:
    """A stored schedule: name -> entry."""
    chosen = draw(st.lists(names, unique=True, max_size=5))
    return {name: draw(schedule_entries(name)) for name in chosen}


@given(schedules(), schedules(), st.booleans())
def test_merged_keeps_past_runs_and_replaces_or_keeps_the_rest(
    stored: dict[str, ScheduleEntry], configured: dict[str, ScheduleEntry], replace: bool
) -> None:
    """Configured entries win, keeping what the stored one knew of its runs; the other stored
    entries go (replace) or stay (merge) untouched."""
    schedule = cron.merged(stored, configured.values(), replace=replace)
    expected_names = set(configured) if replace else set(configured) | set(stored)
    assert set(schedule) == expected_names
    for name, entry in schedule.items():
        if name not in configured:
            assert entry == stored[name]
            continue
        spec = configured[name]
        old = stored.get(name, spec)
        assert entry == attrs.evolve(
            spec,
            added_at=old.added_at,
            last_tick=old.last_tick,
            last_run=old.last_run,
            last_jid=old.last_jid,
        )


@given(
    schedule_entries(), st.floats(1e9, 3e9), st.none() | st.just("feedface"), st.floats(1e9, 3e9)
)
def test_handled_moves_the_last_tick_and_the_last_run_only_with_a_run(
    entry: ScheduleEntry, at: float, jid: str | None, next_run: float
) -> None:
    """A handled tick becomes the last tick, and the last run only when a run was enqueued."""
    after = cron.handled(entry, Due(at=at, action=RUN), jid=jid, next_run=next_run)
    assert after.last_tick == at
    assert after.since == at
    assert after.next_run == next_run
    assert (after.last_run, after.last_jid) == (
        (at, jid) if jid else (entry.last_run, entry.last_jid)
    )


@given(schedule_entries())
def test_since_is_the_last_tick_else_when_it_was_added(entry: ScheduleEntry) -> None:
    """Ticks count from the last handled one, or from when the entry joined the schedule."""
    assert entry.since == (entry.last_tick if entry.last_tick is not None else entry.added_at)
