"""A Redis Cluster's INFO as an operator reads it: the primaries' INFO combined into one.

Each node's INFO describes that node alone, so the dashboard's Redis panel
showing one of them would hide two thirds of a three-primary cluster. The
combined INFO keeps INFO's field names, so a grid reads it as it reads one
server's:

* memory and connections are summed over the primaries (what the cluster
  holds and serves), and `used_memory_human` / `used_memory_peak_human` are
  made from the sums the way Redis makes its own;
* uptime is the smallest, the youngest node's: a node restarted recently
  (after a crash, a failover) is what the figure should not hide;
* every other field is its one value when the primaries agree, else their
  distinct values, in the nodes' order, joined by ", " (a version mid-upgrade);
* `primaries` counts them.

A summed or smallest field that a node doesn't give as a whole number is
left out ("n/a" on the grid): a figure over part of the cluster would read
as the whole's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

#: Fields summed over the primaries, each with the human-readable field Redis derives from it
#: (None: it has none).
SUMMED: dict[str, str | None] = {
    "used_memory": "used_memory_human",
    "used_memory_peak": "used_memory_peak_human",
    "connected_clients": None,
}
#: Fields whose smallest value is the cluster's (the youngest node's uptime).
SMALLEST = ("uptime_in_seconds", "uptime_in_days")
#: The combined INFO's own field: how many primaries it combines.
PRIMARIES = "primaries"
#: Redis's units of `used_memory_human`, each 1024 times the one before.
_UNITS = ("K", "M", "G", "T", "P")


def human_bytes(count: int) -> str:
    """`count` bytes as Redis writes `used_memory_human` (its `bytesToHuman`): `1023B`,
    `1.00K`, `2.50M`, ... up to petabytes, and bytes again beyond."""
    if count < 1024:
        return f"{count}B"
    for power, unit in enumerate(_UNITS, start=1):
        if count < 1024 ** (power + 1):
            return f"{count / 1024**power:.2f}{unit}"
    return f"{count}B"


def combined_info(nodes: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The INFO of a cluster whose primaries answered `nodes` (one INFO each, in order)."""
    combined: dict[str, object] = {}
    for field in dict.fromkeys(name for node in nodes for name in node):
        combined[field] = _agreed([node[field] for node in nodes if field in node])
    for field, human in SUMMED.items():
        total = _folded(nodes, field, sum)
        _put(combined, field, total)
        if human is not None:
            _put(combined, human, None if total is None else human_bytes(total))
    for field in SMALLEST:
        _put(combined, field, _folded(nodes, field, min))
    combined[PRIMARIES] = len(nodes)
    return combined


def _agreed(values: list[object]) -> object:
    """The one value every node gives, or the distinct ones (by their text) joined."""
    distinct = list(dict.fromkeys(str(value) for value in values))
    return values[0] if len(distinct) == 1 else ", ".join(distinct)


def _folded(
    nodes: Sequence[Mapping[str, object]], field: str, fold: Callable[[list[int]], int]
) -> int | None:
    """`fold` of every node's `field`, or None when one of them doesn't give it as a whole
    number (a bool is not one)."""
    values = [node.get(field) for node in nodes]
    numbers = [value for value in values if type(value) is int]
    return fold(numbers) if numbers and len(numbers) == len(values) else None


def _put(combined: dict[str, object], field: str, value: object) -> None:
    """Set `field` to `value`, or leave it out when `value` is None."""
    if value is None:
        combined.pop(field, None)
    else:
        combined[field] = value
