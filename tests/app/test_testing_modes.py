"""cogworker.testing: inline runs jobs in the caller, fake collects them (no Redis needed)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import cogworker
from tests.app import jobs
from tests.app.jobs import (
    Collect,
    CollectAsync,
    CollectAsyncFails,
    CollectFails,
    Countdown,
    CountdownAsync,
    HandsBackACoroutine,
    JobBoomError,
)


@pytest.fixture(autouse=True)
def received() -> Iterator[list[tuple[str, str, tuple[object, ...]]]]:
    """What the testing-mode jobs received, emptied around each test."""
    jobs.RECEIVED.clear()
    yield jobs.RECEIVED
    jobs.RECEIVED.clear()


def test_inline_runs_the_job_in_the_caller_after_a_json_round_trip(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """Under inline(), perform_async runs the job at once with a JSON copy of its arguments."""
    payload = {"items": [1, 2.5, "three", None, True], "nested": {"list": [[]]}}
    numbers = [1, 2, 3]

    with cogworker.testing.inline():
        jid = Collect.perform_async(payload, numbers, "text")

    [(name, run_jid, args)] = received
    assert (name, run_jid) == ("Collect", jid)
    assert args == (payload, numbers, "text")
    assert args[0] is not payload  # a copy, as a real worker would get it
    assert args[1] is not numbers
    assert type(args[1]) is list


def test_inline_raises_the_jobs_error_and_refuses_non_json_arguments(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """Under inline(), a failing job's error reaches the caller, and a tuple is a TypeError."""
    with cogworker.testing.inline():
        with pytest.raises(JobBoomError, match="collect fails"):
            CollectFails.perform_async("x")
        with pytest.raises(TypeError, match=r"args\[0\] is tuple"):
            Collect.perform_async((1, 2))  # type: ignore[arg-type]

    assert [name for name, _, _ in received] == ["CollectFails"]


def test_fake_collects_jobs_and_drain_runs_them_in_order(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """Under fake(), jobs are collected (not run) until drain() runs them and what they push."""
    with cogworker.testing.fake() as queue:
        first = Collect.perform_async("a", [1])
        Countdown.perform_async(2)
        assert received == []
        assert [job.args for job in queue.jobs_for(Collect)] == [("a", [1])]
        assert queue.jobs_for(Collect)[0].jid == first
        assert [job.class_name for job in queue.jobs] == [
            Collect.class_path(),
            Countdown.class_path(),
        ]

        ran = queue.drain()

        assert ran == 4
        assert queue.jobs == []
    assert [(name, args) for name, _, args in received] == [
        ("Collect", ("a", [1])),
        ("Countdown", (2,)),
        ("Countdown", (1,)),
        ("Countdown", (0,)),
    ]


def test_inline_runs_an_async_job_to_its_end_from_sync_code(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """Under inline(), perform_async of an async job runs its coroutine to its end (on an
    event loop of its own), with a JSON copy of the arguments, and raises its error."""
    numbers = [1, 2]

    with cogworker.testing.inline():
        jid = CollectAsync.perform_async("a", numbers)
        with pytest.raises(JobBoomError, match="collect async fails"):
            CollectAsyncFails.perform_async("b")

    assert received[0] == ("CollectAsync", jid, ("a", numbers))
    assert received[0][2][1] is not numbers
    assert [name for name, _, _ in received] == ["CollectAsync", "CollectAsyncFails"]


def test_fake_drain_runs_async_and_sync_jobs_in_order_from_sync_code(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """Under fake(), drain() with no event loop running runs the async jobs too, in order."""
    with cogworker.testing.fake() as queue:
        CollectAsync.perform_async(1)
        Collect.perform_async(2)
        CollectAsync.perform_async(3)
        assert received == []

        assert queue.drain() == 3

    assert [(name, args) for name, _, args in received] == [
        ("CollectAsync", (1,)),
        ("Collect", (2,)),
        ("CollectAsync", (3,)),
    ]


def test_adrain_awaits_async_jobs_inside_a_running_loop(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """In async code, `await queue.adrain()` awaits the async jobs and calls the sync ones."""

    async def main() -> int:
        with cogworker.testing.fake() as queue:
            CollectAsync.perform_async("x")
            Countdown.perform_async(1)
            return await queue.adrain()

    assert asyncio.run(main()) == 3
    assert [(name, args) for name, _, args in received] == [
        ("CollectAsync", ("x",)),
        ("Countdown", (1,)),
        ("Countdown", (0,)),
    ]


def test_a_sync_entry_point_meeting_an_async_job_in_a_running_loop_says_to_await_it(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """perform_async under inline() and drain() under fake(), called while this thread's
    event loop runs, can't finish an async job: a RuntimeError says what to await."""

    async def main() -> None:
        awaited = r"await CollectAsync\.aperform_async"
        with cogworker.testing.inline(), pytest.raises(RuntimeError, match=awaited):
            CollectAsync.perform_async(1)
        with cogworker.testing.fake() as queue:
            CollectAsync.perform_async(2)
            with pytest.raises(RuntimeError, match=r"await queue\.adrain\(\)"):
                queue.drain()

    asyncio.run(main())
    assert received == []


def test_a_sync_perform_that_hands_back_a_coroutine_fails_clearly() -> None:
    """A `def perform` returning a coroutine is a TypeError saying so, not a silent success."""
    says = "returned coroutine instead of running"
    with cogworker.testing.inline(), pytest.raises(TypeError, match=says):
        HandsBackACoroutine.perform_async()


def test_the_awaited_shortcuts_run_async_jobs_under_inline_and_fake(
    received: list[tuple[str, str, tuple[object, ...]]],
) -> None:
    """In async code, `await aperform_async` under inline() awaits the job (and the ones it
    enqueues, awaited too) and raises its error; under fake() it collects, and adrain()
    runs them."""

    async def main() -> int:
        with cogworker.testing.inline():
            await CountdownAsync.aperform_async(1)
            with pytest.raises(JobBoomError, match="collect async fails"):
                await CollectAsyncFails.aperform_async("boom")
        with cogworker.testing.fake() as queue:
            jid = await CollectAsync.aperform_in(60, "later")
            await Collect.aperform_at(0, "sync")
            assert [job.jid for job in queue.jobs_for(CollectAsync)] == [jid]
            assert len(received) == 3  # nothing ran under fake() yet
            return await queue.adrain()

    assert asyncio.run(main()) == 2
    assert [(name, args) for name, _, args in received] == [
        ("CountdownAsync", (1,)),
        ("CountdownAsync", (0,)),
        ("CollectAsyncFails", ("boom",)),
        ("CollectAsync", ("later",)),
        ("Collect", ("sync",)),
    ]
