"""Memory history: per process, the peak RSS of each 15-minute slot of the last 24 hours.

A slot keeps the highest reading any heartbeat in it took: for memory the
peak is what matters, and a spike between two slot boundaries would
otherwise vanish.  Members are stored as `"<slot start>:<KiB>"`, scored by
the slot start, so a slot's sample is unique by score.

The window is the 96 slots whose last one holds `now`: `first_slot(now)`
is the oldest slot kept and read.  `recorded` is the model of what one
beat's record script leaves in the sorted set; `series` assembles what the
dashboard draws from whatever members a read returns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import attrs

SAMPLE_SECONDS = 900
SLOTS = 96  # 24 h of 15-minute slots
WINDOW = SLOTS * SAMPLE_SECONDS
#: The key outlives the window a little, so a gone process leaves nothing for long.
KEY_TTL = WINDOW + 3600


@attrs.frozen(kw_only=True)
class Sample:
    """One slot: its start (unix seconds) and its peak RSS in KiB, or None if no beat wrote it."""

    slot_start: int
    kib: int | None


def slot_of(timestamp: float) -> int:
    """The start of the slot `timestamp` falls in (a multiple of SAMPLE_SECONDS, <= it)."""
    whole = math.floor(timestamp)
    return whole - whole % SAMPLE_SECONDS


def first_slot(now: float) -> int:
    """The oldest of the 96 slots whose last one holds `now`."""
    return slot_of(now) - (SLOTS - 1) * SAMPLE_SECONDS


def member_of(slot: int, kib: int) -> str:
    """The sorted-set member recording `kib` for `slot`."""
    return f"{slot}:{kib}"


def parse_member(member: str | bytes) -> tuple[int, int] | None:
    """(slot, KiB) of a member, or None if it isn't one (`member_of` reversed)."""
    try:
        text = member.decode("ascii") if isinstance(member, bytes) else member
    except UnicodeDecodeError:
        return None
    slot, colon, kib = text.partition(":")
    # Digits only, as the record script's `:(%d+)$` reads a member: int()
    # alone would also take " 5", "+5" or "1_000".
    if not (colon and _is_digits(slot.removeprefix("-")) and _is_digits(kib)):
        return None
    return int(slot), int(kib)


def _is_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def series(members: Iterable[str | bytes], now: float) -> tuple[Sample, ...]:
    """Exactly 96 samples, oldest first, the last being `now`'s (still filling) slot.

    A slot no member names is None; members outside the window or that
    don't parse are ignored; of several members for one slot the peak counts.
    """
    first = first_slot(now)
    peaks: dict[int, int] = {}
    for member in members:
        parsed = parse_member(member)
        if parsed is not None:
            slot, kib = parsed
            peaks[slot] = max(kib, peaks.get(slot, kib))
    starts = (first + index * SAMPLE_SECONDS for index in range(SLOTS))
    return tuple(Sample(slot_start=start, kib=peaks.get(start)) for start in starts)


def recorded(
    members_by_slot: Mapping[int, int], slot: int, kib: int | None, now: float
) -> dict[int, int]:
    """What one beat's record leaves: `slot`'s peak kept, then slots older than the window gone.

    `kib` None (RSS unknown) records nothing but still trims, as the script does.
    """
    kept = dict(members_by_slot)
    if kib is not None:
        kept[slot] = max(kib, kept.get(slot, kib))
    oldest = first_slot(now)
    return {start: value for start, value in kept.items() if start >= oldest}
