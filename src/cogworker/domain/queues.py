"""Which queue to take the next job from: strict order or weighted random."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs


class RandomSource(Protocol):
    """What the weighted choice needs of a random generator (`random.Random` has it)."""

    def random(self) -> float: ...


@attrs.frozen(kw_only=True)
class QueuePlan:
    """The queues a worker serves, each with its weight.

    Equal weights (the usual case: none given) mean strict order: the
    first queue is always drained first.  Any other weights mean a
    weighted random order on every fetch, so no queue starves.
    """

    entries: tuple[tuple[str, int], ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The queue names in the order they were given."""
        return tuple(name for name, _ in self.entries)

    @property
    def strict(self) -> bool:
        """Whether the order is fixed (all weights equal)."""
        return len({weight for _, weight in self.entries}) <= 1


def parse_queue(text: str) -> tuple[str, int]:
    """`"name"` or `"name,weight"` (as on the command line) to a (name, weight) pair."""
    name, _, weight_text = text.partition(",")
    name = name.strip()
    if not name:
        raise ValueError(f"queue {text!r}: the name is empty")
    if not weight_text:
        return name, 1
    try:
        weight = int(weight_text)
    except ValueError:
        raise ValueError(f"queue {text!r}: the weight must be a whole number") from None
    if weight < 1:
        raise ValueError(f"queue {text!r}: the weight must be 1 or more")
    return name, weight


def plan_of(entries: Sequence[str | tuple[str, int]]) -> QueuePlan:
    """A plan from config entries: names, `"name,weight"` strings or (name, weight) pairs."""
    pairs = [parse_queue(entry) if isinstance(entry, str) else _checked(entry) for entry in entries]
    if not pairs:
        raise ValueError("a worker needs at least one queue")
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError(f"queues listed twice: {sorted({n for n in names if names.count(n) > 1})}")
    return QueuePlan(entries=tuple(pairs))


def _checked(entry: tuple[str, int]) -> tuple[str, int]:
    name, weight = entry
    if not isinstance(name, str) or not name or "," in name:
        raise ValueError(f"queue {entry!r}: the name must be a non-empty string without commas")
    if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
        raise ValueError(f"queue {entry!r}: the weight must be a whole number, 1 or more")
    return name, weight


def fetch_order(plan: QueuePlan, rng: RandomSource) -> tuple[str, ...]:
    """The order to look at the queues in for one fetch.

    Weighted: each place is drawn among the queues left, with chances
    proportional to their weights (sampling without replacement).
    """
    if plan.strict:
        return plan.names
    left = list(plan.entries)
    order: list[str] = []
    while left:
        point = rng.random() * sum(weight for _, weight in left)
        index = _index_at(left, point)
        order.append(left.pop(index)[0])
    return tuple(order)


def _index_at(entries: list[tuple[str, int]], point: float) -> int:
    for index, (_, weight) in enumerate(entries):
        if point < weight:
            return index
        point -= weight
    return len(entries) - 1  # only reached through float rounding at the very top
