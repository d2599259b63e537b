"""Properties of the memory history: slot math, members, series assembly and the record model."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.memory import (
    KEY_TTL,
    SAMPLE_SECONDS,
    SLOTS,
    WINDOW,
    first_slot,
    member_of,
    parse_member,
    recorded,
    series,
    slot_of,
)
from tests.domain.strategies import beats, clock_times, kibs

#: Slot starts of any sign, as `member_of` may be given.
slots = st.integers(min_value=-(10**12), max_value=10**12).map(lambda n: n * SAMPLE_SECONDS)


def replay(history: Iterable[tuple[float, int]]) -> dict[int, int]:
    """The model's sorted set after each beat of `history` recorded its RSS at its own time."""
    kept: dict[int, int] = {}
    for at, kib in history:
        kept = recorded(kept, slot_of(at), kib, at)
    return kept


def peaks(history: Iterable[tuple[float, int]], now: float) -> dict[int, int]:
    """Straight from the beats: each slot of `now`'s window with the highest reading in it."""
    found: dict[int, int] = {}
    for at, kib in history:
        slot = slot_of(at)
        if first_slot(now) <= slot <= slot_of(now):
            found[slot] = max(kib, found.get(slot, kib))
    return found


def as_members(kept: Mapping[int, int]) -> list[str]:
    """The sorted set's members for a model state."""
    return [member_of(slot, kib) for slot, kib in kept.items()]


def test_the_spec_constants() -> None:
    """96 slots of 15 minutes make the 24 h window; the key lives an hour longer."""
    assert (SAMPLE_SECONDS, SLOTS, WINDOW, KEY_TTL) == (900, 96, 86_400, 90_000)


@given(st.floats(min_value=-1e10, max_value=1e10, allow_nan=False))
def test_a_slot_starts_at_or_before_its_time(timestamp: float) -> None:
    """A slot start is a multiple of 15 minutes, at most `timestamp` and less than a slot before."""
    slot = slot_of(timestamp)
    assert slot % SAMPLE_SECONDS == 0
    assert slot <= timestamp < slot + SAMPLE_SECONDS


@given(clock_times)
def test_the_window_ends_with_nows_slot(now: float) -> None:
    """The first slot is 95 slots before now's, so the 96th holds `now`."""
    assert first_slot(now) + (SLOTS - 1) * SAMPLE_SECONDS == slot_of(now)
    assert first_slot(now) % SAMPLE_SECONDS == 0


@given(slots, kibs, st.booleans())
def test_a_member_parses_back(slot: int, kib: int, as_bytes: bool) -> None:
    """`parse_member` reverses `member_of`, from str or (as Redis answers) bytes."""
    member = member_of(slot, kib)
    assert parse_member(member.encode() if as_bytes else member) == (slot, kib)


@given(st.text(max_size=30) | st.binary(max_size=30))
def test_parsing_never_raises(member: str | bytes) -> None:
    """Any string or bytes parses to a pair of ints or to None, never an exception."""
    parsed = parse_member(member)
    assert parsed is None or all(isinstance(part, int) for part in parsed)


@pytest.mark.parametrize(
    "member",
    ["", "900", "900:", ":5", "900:5:6", "900: 5", " 900:5", "+900:5", "900:+5", "900:-5",
     "1_800:5", "900:5.0", "abc:5", "900:٣", b"\xff:5"],
)  # fmt: skip
def test_malformed_members_are_none(member: str | bytes) -> None:
    """Anything but `<slot>:<digits>` is not a member (the record script reads `:(%d+)$`)."""
    assert parse_member(member) is None


@given(st.lists(st.tuples(st.integers(min_value=-200, max_value=200), kibs)), clock_times)
def test_series_is_always_96_slots_oldest_first(found: list[tuple[int, int]], now: float) -> None:
    """Whatever members a read returns, the series is 96 consecutive slots ending with now's."""
    members = [member_of(slot_of(now) + step * SAMPLE_SECONDS, kib) for step, kib in found]
    samples = series(members, now)
    assert len(samples) == SLOTS
    assert [sample.slot_start for sample in samples] == [
        first_slot(now) + index * SAMPLE_SECONDS for index in range(SLOTS)
    ]
    assert samples[-1].slot_start == slot_of(now)


@given(st.lists(st.tuples(st.integers(min_value=-200, max_value=200), kibs)), clock_times)
def test_series_holds_each_slots_peak(found: list[tuple[int, int]], now: float) -> None:
    """A slot in the window shows the highest of its members; the others are None or ignored."""
    members = [member_of(slot_of(now) + step * SAMPLE_SECONDS, kib) for step, kib in found]
    expected: dict[int, int] = {}
    for step, kib in found:
        if -SLOTS < step <= 0:
            slot = slot_of(now) + step * SAMPLE_SECONDS
            expected[slot] = max(kib, expected.get(slot, kib))
    assert {s.slot_start: s.kib for s in series(members, now) if s.kib is not None} == expected


@given(clock_times, kibs)
def test_series_ignores_what_is_not_a_member(now: float, kib: int) -> None:
    """Garbage and misaligned slots in the set don't show; a well-formed member still does."""
    members: list[str | bytes] = [
        "junk",
        b"\x00",
        member_of(slot_of(now) + 1, kib),
        member_of(slot_of(now), kib),
    ]
    assert [s.kib for s in series(members, now)] == [None] * (SLOTS - 1) + [kib]


@given(beats(min_size=1), st.randoms(use_true_random=False))
def test_peak_kept_whatever_the_order_of_beats(
    history: list[tuple[float, int]], rng: random.Random
) -> None:
    """Beats recorded in any order, all as of the last one's time, leave each slot's peak."""
    now = history[-1][0]
    shuffled = list(history)
    rng.shuffle(shuffled)
    kept: dict[int, int] = {}
    for at, kib in shuffled:
        kept = recorded(kept, slot_of(at), kib, now)
    assert kept == peaks(history, now)


@given(clock_times, st.lists(kibs, min_size=1, max_size=30), st.data())
def test_beats_in_one_slot_keep_its_peak(
    now: float, readings: list[int], data: st.DataObject
) -> None:
    """However the readings within one slot come, in time order, the slot ends with their max."""
    start = slot_of(now)
    offsets = sorted(
        data.draw(st.lists(st.integers(0, SAMPLE_SECONDS - 1), min_size=len(readings),
                           max_size=len(readings)))
    )  # fmt: skip
    history = [(start + offset, kib) for offset, kib in zip(offsets, readings, strict=True)]
    assert replay(history) == {start: max(readings)}


@given(beats(min_size=1))
def test_replaying_beats_keeps_the_windows_peaks(history: list[tuple[float, int]]) -> None:
    """After beats in time order, the set holds exactly the peaks of the last one's window."""
    assert replay(history) == peaks(history, history[-1][0])


@given(beats())
def test_at_most_96_slots_after_any_beats(history: list[tuple[float, int]]) -> None:
    """After every beat of a process whose clock runs forwards, at most 96 slots are kept."""
    kept: dict[int, int] = {}
    for at, kib in history:
        kept = recorded(kept, slot_of(at), kib, at)
        assert len(kept) <= SLOTS
        assert all(first_slot(at) <= slot <= slot_of(at) for slot in kept)


@given(beats(min_size=1), st.floats(min_value=0, max_value=WINDOW))
def test_series_of_the_recorded_set_is_its_peaks(
    history: list[tuple[float, int]], later: float
) -> None:
    """Reading the model's members back, a little later, shows the peaks still in the window."""
    now = history[-1][0] + later
    samples = series(as_members(replay(history)), now)
    assert {s.slot_start: s.kib for s in samples if s.kib is not None} == peaks(history, now)


@given(st.dictionaries(slots, kibs, max_size=5), slots, clock_times)
def test_an_unknown_rss_records_nothing_but_trims(
    kept: dict[int, int], slot: int, now: float
) -> None:
    """A beat that couldn't read its RSS adds no slot, and old slots still go."""
    assert recorded(kept, slot, None, now) == {
        start: kib for start, kib in kept.items() if start >= first_slot(now)
    }


@pytest.mark.parametrize("start", [1_700_000_000.0, 1_700_000_123.4, 1_700_000_899.9])
def test_a_simulated_day_of_beats_keeps_96_slots(start: float) -> None:
    """A beat every 5 s for 24 h (the clock passed in) leaves 96 slots, each its peak."""
    history = [(start + 5 * beat, 100_000 + (beat * 7919) % 50_000) for beat in range(17_280)]
    kept: dict[int, int] = {}
    most = 0
    for at, kib in history:
        kept = recorded(kept, slot_of(at), kib, at)
        most = max(most, len(kept))
    now = history[-1][0]
    assert most <= SLOTS
    assert len(kept) == SLOTS
    assert kept == peaks(history, now)
    assert all(sample.kib is not None for sample in series(as_members(kept), now))
