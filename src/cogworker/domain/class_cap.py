"""Which job classes a reading of per-class metrics covers when there are many.

Each queue's registry of classes scores a class by when it last ran there
(refreshed about once a minute).  A scrape or the Metrics page reads the
figures of at most `limit` classes: those that ran last over every queue
(ties by name, as Redis orders a registry read newest first), so what it
costs Redis and what it sends stays bounded however many classes there are;
it says how many it left out.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

#: The classes a reading covers unless told (`Config.metrics_max_classes`): a scrape of
#: them is about 20 series each.
DEFAULT_LIMIT = 200


@attrs.frozen(kw_only=True)
class Covered:
    """The classes a reading covers, by name, and how many with metrics it leaves out."""

    names: frozenset[str]
    left_out: int


def last_runs(registries: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """When each class last ran on any queue, from each queue's registry (name -> time)."""
    latest: dict[str, float] = {}
    for registry in registries.values():
        for name, at in registry.items():
            latest[name] = max(at, latest.get(name, at))
    return latest


def covered(registries: Mapping[str, Mapping[str, float]], limit: int) -> Covered:
    """The `limit` classes that ran last over every queue (all of them, if no more), and
    how many others have metrics."""
    if limit < 1:
        raise ValueError(f"a reading covers one class or more, not {limit!r}")
    latest = last_runs(registries)
    if len(latest) <= limit:
        return Covered(names=frozenset(latest), left_out=0)
    ranked = sorted(latest.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return Covered(names=frozenset(name for name, _at in ranked[:limit]),
                   left_out=len(latest) - limit)  # fmt: skip
