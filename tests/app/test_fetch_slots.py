"""FetchSlots: how many jobs the fetcher may take, and when a fetch is worth a wake-up."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cogworker
from cogworker.app.worker.slots import FetchSlots
from cogworker.exceptions import ConfigError

NO_WAIT = 0.0


def test_without_prefetch_every_freed_thread_is_worth_a_fetch() -> None:
    """Concurrency places at first; each finished job frees one that is taken at once."""
    slots = FetchSlots(concurrency=3)
    assert slots.take(NO_WAIT) == 3
    assert slots.take(NO_WAIT) == 0
    slots.finished()
    assert slots.take(NO_WAIT) == 1


def test_with_prefetch_the_fetcher_waits_for_half_the_buffer() -> None:
    """Prefetch 4: one freed place isn't worth a round trip, two are."""
    slots = FetchSlots(concurrency=1, prefetch=4)
    assert slots.take(NO_WAIT) == 5
    slots.finished()
    assert slots.take(NO_WAIT) == 0
    slots.finished()
    assert slots.take(NO_WAIT) == 2


def test_a_starving_processor_gets_a_fetch_for_whatever_is_free() -> None:
    """A processor with nothing to take makes one free place worth it; the flag is then spent."""
    slots = FetchSlots(concurrency=1, prefetch=4)
    slots.take(NO_WAIT)
    slots.finished()
    slots.starving()
    assert slots.take(NO_WAIT) == 1
    slots.finished()
    assert slots.take(NO_WAIT) == 0


def test_places_a_fetch_did_not_fill_come_back() -> None:
    """Taken places the fetch didn't use are free again."""
    slots = FetchSlots(concurrency=4)
    assert slots.take(NO_WAIT) == 4
    slots.give_back(3)
    assert slots.take(NO_WAIT) == 3


def test_a_waiting_fetcher_wakes_when_a_job_finishes() -> None:
    """take() blocks until another thread frees a place, then returns it."""
    slots = FetchSlots(concurrency=1)
    slots.take(NO_WAIT)
    got: list[int] = []
    fetcher = threading.Thread(target=lambda: got.append(slots.take(timeout=30.0)))
    fetcher.start()
    slots.finished()
    fetcher.join(30.0)
    assert got == [1]


@given(
    st.integers(1, 20),
    st.integers(0, 40),
    st.lists(st.sampled_from(["fetch", "finish", "starve"]), max_size=60),
)
def test_places_are_never_lost_nor_made_up(
    concurrency: int, prefetch: int, steps: list[str]
) -> None:
    """Whatever the order of calls, held jobs stay within capacity, and once every held
    job has finished all `concurrency + prefetch` places are free again."""
    slots = FetchSlots(concurrency, prefetch)
    held = 0
    for step in steps:
        if step == "fetch":
            taken = slots.take(NO_WAIT)
            slots.give_back(taken // 2)  # a fetch that found half of what it asked for
            held += taken - taken // 2
        elif step == "finish" and held:
            held -= 1
            slots.finished()
        elif step == "starve":
            slots.starving()
        assert 0 <= held <= concurrency + prefetch
    for _ in range(held):
        slots.finished()
    assert slots.take(NO_WAIT) == concurrency + prefetch


def test_a_negative_prefetch_is_a_config_error() -> None:
    """Prefetch 0 (the default) or more; below that the Config refuses, naming it."""
    assert cogworker.Config().prefetch == 0
    with pytest.raises(ConfigError, match=r"prefetch must be a whole number, 0 or more .*got -1"):
        cogworker.Config(prefetch=-1)
