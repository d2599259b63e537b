"""cogworker.testing: inline runs jobs in the caller, fake collects them (no Redis needed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import cogworker
from tests.app import jobs
from tests.app.jobs import Collect, CollectFails, Countdown, JobBoomError


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
