"""Hypothesis strategies for the domain records, shared by every domain test."""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from cogworker.domain.class_metrics import BOUNDS, RunSample, Tally
from cogworker.domain.failure import (
    DISCARD,
    KILL,
    NO_HOOK,
    HookAnswer,
    HookRaised,
    HookReturned,
)
from cogworker.domain.job import ErrorRecord, JobRecord
from cogworker.domain.json_values import JSON
from cogworker.domain.layout import Step
from cogworker.domain.layout_moves import Rename
from cogworker.domain.layout_rewrites import Rewrite
from cogworker.domain.layout_splits import Split
from cogworker.domain.memory import SLOTS, WINDOW
from cogworker.domain.retries import max_retries
from cogworker.domain.status import (
    STATUSES,
    Dropped,
    DropReason,
    Enqueued,
    Event,
    Failed,
    FailedOutcome,
    Started,
    Status,
    Succeeded,
)

#: The payload keys that map to record fields (never in `extra`).
PAYLOAD_FIELDS = frozenset(
    {
        "class",
        "queue",
        "jid",
        "args",
        "retry",
        "created_at",
        "enqueued_at",
        "retry_count",
        "error_class",
        "error_message",
        "error_backtrace",
        "failed_at",
        "retried_at",
        "interrupted_count",
        "expires_at",
    }
)

names = st.text(min_size=1, max_size=20)
timestamps = st.floats(min_value=0, max_value=4e9, allow_nan=False)
counts = st.integers(min_value=0, max_value=100)

json_scalars: st.SearchStrategy[JSON] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values: st.SearchStrategy[JSON] = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=12,
)

#: A job's `retry` option: True, False, or a budget (negative ones count as none).
retry_options: st.SearchStrategy[bool | int] = st.one_of(
    st.booleans(), st.integers(min_value=-3, max_value=40)
)
extra_keys = st.text(max_size=12).filter(lambda key: key not in PAYLOAD_FIELDS)

error_records = st.builds(
    ErrorRecord,
    class_name=names,
    message=st.text(max_size=40),
    backtrace=st.text(max_size=80),
)


def job_records(
    *,
    retry: st.SearchStrategy[bool | int] = retry_options,
    retry_count: st.SearchStrategy[int | None] | None = None,
) -> st.SearchStrategy[JobRecord]:
    """Any job record, with every optional field present or not."""
    return st.builds(
        JobRecord,
        class_name=names,
        queue=names,
        jid=names,
        args=st.lists(json_values, max_size=4).map(tuple),
        retry=retry,
        created_at=timestamps,
        enqueued_at=st.none() | timestamps,
        retry_count=retry_count if retry_count is not None else st.none() | counts,
        error_class=st.none() | names,
        error_message=st.none() | st.text(max_size=40),
        error_backtrace=st.none() | st.text(max_size=80),
        failed_at=st.none() | timestamps,
        retried_at=st.none() | timestamps,
        interrupted_count=st.none() | counts,
        expires_at=st.none() | timestamps,
        extra=st.dictionaries(extra_keys, json_values, max_size=3),
    )


@st.composite
def jobs_with_retries_left(draw: st.DrawFn) -> JobRecord:
    """A job whose current attempt, if it fails, still has a retry to make (and no expiry
    that would drop it instead)."""
    job = draw(job_records(retry=st.just(True) | st.integers(min_value=1, max_value=40)))
    made = draw(st.integers(min_value=0, max_value=max_retries(job.retry) - 1))
    return attrs.evolve(job, retry_count=_stored_count(draw, made), expires_at=None)


@st.composite
def jobs_on_last_failure(draw: st.DrawFn) -> JobRecord:
    """A job whose current attempt's failure is the last one (no retry left)."""
    job = draw(job_records())
    budget = max_retries(job.retry)
    made = draw(st.integers(min_value=budget, max_value=budget + 10))
    return attrs.evolve(job, retry_count=_stored_count(draw, made))


def _stored_count(draw: st.DrawFn, made: int) -> int | None:
    # A job that never failed has no `retry_count` at all, or (written back) 0.
    return None if made == 0 and draw(st.booleans()) else made


#: Delays a `retry_in` hook may return: ints or floats, >= 0 and finite.
valid_delays: st.SearchStrategy[int | float] = st.one_of(
    st.integers(min_value=0, max_value=10**12),
    st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False),
)


class Opaque:
    """A user object with no meaning to cogworker."""

    def __repr__(self) -> str:
        return "<Opaque>"


class BadRepr:
    """A user object whose repr raises."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


#: Values a `retry_in` hook may return that aren't a delay, None, KILL or DISCARD.
invalid_hook_values: st.SearchStrategy[object] = st.one_of(
    st.booleans(),
    st.integers(max_value=-1),
    st.floats(max_value=-1e-9),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), 10**400, 10**5000]),
    st.text(max_size=20),
    st.sampled_from(["kill", "discard"]),
    st.lists(st.integers(), max_size=3),
    st.builds(Opaque),
    st.builds(BadRepr),
    st.text(min_size=500, max_size=600),
)

#: Anything a `retry_in` hook may return.
hook_values: st.SearchStrategy[object] = st.one_of(
    st.none(), st.sampled_from([KILL, DISCARD]), valid_delays, invalid_hook_values
)

hook_answers: st.SearchStrategy[HookAnswer] = st.one_of(
    st.just(NO_HOOK),
    st.builds(HookRaised, error=error_records),
    st.builds(HookReturned, value=hook_values),
)


# -- memory history, sparklines, statuses, stats (issue #6) --

#: RSS readings in KiB: from nothing to 1 PiB.
kibs = st.integers(min_value=0, max_value=2**40)
#: Clock readings of a plausible worker: 2001 to 2096.
clock_times = st.floats(min_value=1e9, max_value=4e9, allow_nan=False)

#: A series as the Workers page draws it: a slot's peak RSS, or None where no beat wrote.
spark_values: st.SearchStrategy[list[int | None]] = st.lists(
    st.none() | kibs, min_size=1, max_size=2 * SLOTS
)


@st.composite
def beats(draw: st.DrawFn, min_size: int = 0, max_size: int = 60) -> list[tuple[float, int]]:
    """Heartbeats of one process, oldest first: (clock reading, RSS in KiB), over up to 2 days."""
    start = draw(clock_times)
    offsets = draw(
        st.lists(st.floats(min_value=0, max_value=2 * WINDOW), min_size=min_size, max_size=max_size)
    )
    return [(start + offset, draw(kibs)) for offset in sorted(offsets)]


statuses: st.SearchStrategy[Status] = st.sampled_from(STATUSES)
attempt_outcomes: st.SearchStrategy[FailedOutcome] = st.sampled_from(
    ["retrying", "dead", "killed", "discarded"]
)
drop_reasons: st.SearchStrategy[DropReason] = st.sampled_from(["cancelled", "expired"])
status_events: st.SearchStrategy[Event] = st.one_of(
    st.builds(Enqueued),
    st.builds(Started),
    st.builds(Succeeded),
    st.builds(Failed, outcome=attempt_outcomes),
    st.builds(Dropped, reason=drop_reasons),
)

#: UTC days as the counters name them.
day_names = st.dates().map(lambda day: day.strftime("%Y-%m-%d"))
day_counters: st.SearchStrategy[dict[str, int]] = st.dictionaries(
    day_names, st.integers(min_value=0, max_value=10**9), max_size=10
)


@st.composite
def layout_steps(draw: st.DrawFn) -> tuple[Step, ...]:
    """Layout steps numbered 1, 2, ... in order, each renaming a few keys (names unique),
    some rewriting the entries of a family of lists, some splitting a sorted set."""
    sizes = draw(st.lists(st.integers(min_value=0, max_value=3), max_size=5))
    rewrites = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    splits = draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)))
    return tuple(
        Step(
            number=index + 1,
            summary=f"step {index + 1}",
            renames=tuple(
                Rename(old=f"old:{index}:{key}", new=f"new:{index}:{key}") for key in range(size)
            ),
            rewrites=(Rewrite(pattern=f"list:{index}:*", kind="list"),) if rewrite else (),
            splits=(Split(old=f"set:{index}", new=f"{{q:*}}:set:{index}"),) if split else (),
        )
        for index, (size, rewrite, split) in enumerate(zip(sizes, rewrites, splits, strict=True))
    )


#: Run times from none to past the last bucket bound, in microseconds.
run_micros = st.one_of(
    st.integers(min_value=0, max_value=10**10),
    st.sampled_from(BOUNDS).flatmap(lambda bound: st.sampled_from([bound - 1, bound, bound + 1])),
)
run_samples: st.SearchStrategy[RunSample] = st.builds(
    RunSample, micros=run_micros, failed=st.booleans()
)
#: Runs with the time they ended, over a few hours.
timed_runs = st.lists(
    st.tuples(st.floats(min_value=1.7e9, max_value=1.7e9 + 5 * 3600), run_samples), max_size=40
)
tallies: st.SearchStrategy[Tally] = st.lists(run_samples, max_size=20).map(Tally.of)


#: Byte counts from none to past Redis's last unit (petabytes), its unit bounds included.
byte_counts = st.one_of(
    st.integers(min_value=0, max_value=1024**6 * 2),
    st.integers(min_value=0, max_value=6).flatmap(
        lambda power: st.sampled_from([1024**power - 1, 1024**power, 1024**power + 1])
    ),
)
#: One primary's INFO (server, clients and memory sections) as redis-py parses it: the fields
#: the dashboard's grids show and combine, and one more every node names alike.
node_infos: st.SearchStrategy[dict[str, object]] = st.fixed_dictionaries(
    {
        "redis_version": st.sampled_from(["7.0.15", "7.2.4"]),
        "redis_mode": st.just("cluster"),
        "os": st.sampled_from(["Linux 6.1.0 x86_64", "Linux 6.8.0 aarch64"]),
        "uptime_in_seconds": st.integers(min_value=0, max_value=10**9),
        "uptime_in_days": st.integers(min_value=0, max_value=10**4),
        "connected_clients": st.integers(min_value=0, max_value=10**5),
        "used_memory": byte_counts,
        "used_memory_human": st.just("as the node wrote it"),
        "used_memory_peak": byte_counts,
        "used_memory_peak_human": st.just("as the node wrote it"),
        "mem_allocator": st.just("jemalloc-5.3.0"),
    }
)


# -- which classes a metrics reading covers (domain.class_cap) --

#: Classes' registries per queue: class name -> when it last ran there (ties likely).
registries = st.dictionaries(
    st.sampled_from(["default", "mail", "reports"]),
    st.dictionaries(
        st.sampled_from([f"app.C{n}" for n in range(12)]),
        st.integers(min_value=0, max_value=20).map(float),
        max_size=12,
    ),
    max_size=3,
)
