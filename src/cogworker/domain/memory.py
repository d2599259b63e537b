"""Memory history: per process, the peak RSS of each 15-minute slot of the last 24 hours.

A slot keeps the highest reading any heartbeat in it took: for memory the
peak is what matters, and a spike between two slot boundaries would
otherwise vanish.  Members are stored as `"<slot start>:<KiB>"`, scored by
the slot start, so a slot's sample is unique by score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

SAMPLE_SECONDS = 900
SLOTS = 96  # 24 h of 15-minute slots
WINDOW = SLOTS * SAMPLE_SECONDS
#: The key outlives the window a little, so a gone process leaves nothing for long.
KEY_TTL = WINDOW + 3600


@attrs.frozen
class Sample:
    """One slot: its start (unix seconds) and its peak RSS in KiB, or None if no beat wrote it."""

    slot_start: int
    kib: int | None


def slot_of(timestamp: float) -> int:
    """The start of the slot `timestamp` falls in."""
    whole = int(timestamp)
    return whole - whole % SAMPLE_SECONDS


def first_slot(now: float) -> int:
    """The oldest of the 96 slots whose last one holds `now`."""
    return slot_of(now) - (SLOTS - 1) * SAMPLE_SECONDS


def member_of(slot: int, kib: int) -> str:
    """The sorted-set member recording `kib` for `slot`."""
    return f"{slot}:{kib}"


def parse_member(member: str | bytes) -> tuple[int, int] | None:
    """(slot, KiB) of a member, or None if it isn't one."""
    text = member.decode() if isinstance(member, bytes) else member
    slot, _, kib = text.partition(":")
    try:
        return int(slot), int(kib)
    except ValueError:
        return None


def series(members: Iterable[str | bytes], now: float) -> tuple[Sample, ...]:
    """Exactly 96 samples, oldest first, the last being `now`'s (still filling) slot."""
    first = first_slot(now)
    peaks: dict[int, int] = {}
    for member in members:
        parsed = parse_member(member)
        if parsed is not None:
            slot, kib = parsed
            peaks[slot] = max(kib, peaks.get(slot, kib))
    slots = (first + index * SAMPLE_SECONDS for index in range(SLOTS))
    return tuple(Sample(slot, peaks.get(slot)) for slot in slots)


def recorded(members_by_slot: Mapping[int, int], slot: int, kib: int, now: float) -> dict[int, int]:
    """What one beat's record leaves: the slot's peak kept, slots older than the window gone."""
    kept = {s: value for s, value in members_by_slot.items() if s >= first_slot(now)}
    kept[slot] = max(kib, kept.get(slot, kib))
    return kept
