"""Unique jobs' pure rules: lock keys, when a lock is taken and let go, how long it lasts."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cogworker.domain import unique
from cogworker.domain.retries import LONGEST_DELAY

args_lists = st.lists(st.one_of(st.integers(), st.text(), st.none()), max_size=4)
positive = st.floats(min_value=0.001, max_value=1e9, allow_nan=False)


@given(st.text(min_size=1), st.text(min_size=1), args_lists)
def test_the_same_job_gets_the_same_lock(class_path: str, queue: str, args: list[object]) -> None:
    """A lock's name depends only on class, queue and arguments, and starts with the first two."""
    name = unique.lock_name(class_path, queue, args)
    assert name == unique.lock_name(class_path, queue, list(args))
    assert name.startswith(class_path + ":" + queue + ":")


@given(args_lists, args_lists)
def test_other_arguments_get_another_lock(first: list[object], second: list[object]) -> None:
    """Different arguments, different locks; a custom key overrides the arguments."""
    if first != second:
        assert unique.lock_name("a.B", "q", first) != unique.lock_name("a.B", "q", second)
    assert unique.lock_name("a.B", "q", first, "k") == unique.lock_name("a.B", "q", second, "k")


def test_each_mode_locks_and_releases_at_its_own_moment() -> None:
    """until_executed holds to the end, until_executing lets go at start, while_executing runs."""
    assert unique.locks_at_enqueue("until_executed")
    assert unique.locks_at_enqueue("until_executing")
    assert not unique.locks_at_enqueue("while_executing")
    assert not unique.locks_at_enqueue(None)
    assert unique.released_at_start("until_executing")
    assert unique.held_while_running("while_executing")
    assert unique.held_until_done("until_executed")
    assert not any(
        check(None)
        for check in (unique.released_at_start, unique.held_while_running, unique.held_until_done)
    )


@given(positive, positive, st.floats(min_value=0, max_value=1e9))
@example(ttl=0.001953125, wait=0.002, now=67108864.0)  # a wait that rounds when added to `now`
def test_a_lock_outlasts_a_scheduled_wait_and_a_retry(ttl: float, wait: float, now: float) -> None:
    """At enqueue and in the retry set, the lock lasts its TTL past the time the job is due."""
    due = now + wait
    # The wait as floats can express it after adding to `now` (large `now` rounds it).
    until_due = due - now
    assert unique.enqueue_ttl(ttl, due, now) == pytest.approx(ttl + until_due)
    assert unique.enqueue_ttl(ttl, None, now) == ttl
    assert unique.retry_ttl(ttl, due, now) == pytest.approx(ttl + until_due)
    assert unique.retry_ttl(ttl, now - wait, now) == ttl


@given(st.one_of(st.none(), st.booleans(), st.text(), st.floats(max_value=0), positive))
def test_a_payloads_ttl_is_used_only_when_it_is_a_positive_number(value: object) -> None:
    """`unique_ttl` counts when it is a positive number (not a bool); else the default."""
    got = unique.ttl_of({"unique_ttl": value}, 42.0)
    valid = isinstance(value, float) and value > 0
    assert got == (value if valid else 42.0)
    assert unique.ttl_of({}, 42.0) == 42.0


@given(
    st.floats(min_value=0.001, max_value=1e300),
    st.floats(min_value=0, max_value=1e300),
    st.floats(min_value=0, max_value=2e9),
)
def test_a_lock_ttl_never_exceeds_what_redis_can_hold(ttl: float, wait: float, now: float) -> None:
    """However far off the retry or run (a `retry_in` of 1e300), a lock TTL is capped."""
    assert unique.retry_ttl(ttl, now + wait, now) <= LONGEST_DELAY
    assert unique.enqueue_ttl(ttl, now + wait, now) <= LONGEST_DELAY
