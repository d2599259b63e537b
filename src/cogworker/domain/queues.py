"""Which queue to take the next job from: strict order or weighted random; and what may
name a queue."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Sequence
from typing import Protocol

import attrs

#: The longest queue name: a name goes into Redis keys and the dashboard's links and forms.
LONGEST_NAME = 500
#: What may name a queue, as the error for a name that may not says it.
NAME_RULE = (
    f"a queue name is 1 to {LONGEST_NAME} characters, without control characters, "
    "commas (they give a queue its weight: name,weight) or spaces at either end"
)


def name_problem(name: object) -> str | None:
    """Which part of `NAME_RULE` `name` breaks, or None if it may name a queue."""
    if not isinstance(name, str):
        return f"it is a {type(name).__name__}, not a string"
    return _text_problem(name)


# Every push checks its job's queue name (a middleware may have changed it): a
# few names, checked over and over, so each one's verdict is kept.
@functools.lru_cache(maxsize=1024)
def _text_problem(name: str) -> str | None:
    if not name:
        return "the name is empty"
    if len(name) > LONGEST_NAME:
        return f"the name is {len(name)} characters long"
    if any(unicodedata.category(char) == "Cc" for char in name):
        return "the name holds a control character"
    if "," in name:
        return "the name holds a comma"
    if name != name.strip():
        return "the name starts or ends with a space"
    return None


def checked_name(name: object) -> str:
    """`name`, if it may name a queue; else ValueError naming the rule it breaks."""
    problem = name_problem(name)
    if problem is not None or not isinstance(name, str):
        raise ValueError(f"queue {name!r:.80}: {problem}; {NAME_RULE}")
    return name


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
    name = checked_name(name.strip())
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
    checked_name(name)
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
