"""Per-class metrics read back from Redis and merged over queues: the figures the
settling scripts write (lua/_tallies.lua), for `/metrics` and the dashboard.

For a queue Q and a class C, in Q's slot (`redis_keys.metrics_*`):

* `cogworker:{q:Q}:metrics:C:m:MINUTE`, `...:C:h:HOUR` and `...:C:total`: tally
  hashes with fields `t` (execution time, microseconds), `f` (failures) and
  one per histogram bucket, named by its index (their sum: the runs);
* `cogworker:{q:Q}:metrics:classes`: the classes run on Q, by last run.

A reading of many classes covers at most a limit of them, those that ran
last (`domain.class_cap`), so its commands stay bounded: the registries'
one per queue, then the covered classes' hashes.

`cogworker:parts` lists the queues to read.  Every read is three pipelined
round trips: the parts, every part's classes, then the hashes asked for.  A
key holding something else than cogworker writes there (a registry that isn't
a sorted set, a hash that isn't a tally, a string SET by hand) is left out
and named in the reading's `problems`: the rest of the reading stands.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.flagged_reads import refusal, replies
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.domain.class_cap import DEFAULT_LIMIT, covered
from cogworker.domain.class_metrics import BUCKETS, NO_RUNS, Tally, minute_of, window

Group = TypeVar("Group", bound=Hashable)
_COUNTERS = {b"f": "failures", b"t": "micros"}


def tally_of(fields: Mapping[bytes, bytes]) -> Tally | None:
    """The tally a hash holds (empty: no runs), or None if it isn't one."""
    figures = {"failures": 0, "micros": 0}
    counts = [0] * BUCKETS
    for field, value in fields.items():
        if not value.isdigit():
            return None
        if field in _COUNTERS:
            figures[_COUNTERS[field]] = int(value)
        elif field.isdigit() and int(field) < BUCKETS:
            counts[int(field)] = int(value)
        else:
            return None
    return Tally(runs=sum(counts), **figures, counts=tuple(counts))


@attrs.frozen
class ClassTallies:
    """Tallies by class, merged over the queues the class ran on."""

    tallies: Mapping[str, Tally]
    #: The hashes that don't hold a tally, a sentence each.
    problems: frozenset[str] = frozenset()
    #: Classes with metrics not read: past the reading's limit (`domain.class_cap`).
    left_out: int = 0


#: Per queue, each class run on it and when it last ran there (its registry's score).
Registries = dict[str, dict[str, float]]


@attrs.define
class ClassMetricsStore:
    """Per-class metrics on one Redis."""

    client: RedisClient

    def classes(self) -> dict[str, tuple[str, ...]]:
        """The classes run on each queue within the metrics' retention, by queue."""
        registries, _problems = self._registries()
        return {queue: tuple(sorted(names)) for queue, names in registries.items()}

    def _registries(self) -> tuple[Registries, frozenset[str]]:
        """Every queue's registry of classes, and those that can't be read (left out)."""
        queues = sorted(as_bytes(queue).decode() for queue in self.client.smembers(keys.PARTS))
        pipe = pipelines.pipeline(self.client)
        for queue in queues:
            pipe.zrange(keys.metrics_classes(queue), 0, -1, withscores=True)
        found: Registries = {}
        problems: set[str] = set()
        for queue, scored in zip(queues, replies(pipe), strict=True):
            problem = refusal(keys.metrics_classes(queue), scored, "sorted set")
            if problem is None:
                found[queue] = {as_bytes(name).decode(): float(at) for name, at in scored}
            else:
                problems.add(problem)
        return found, frozenset(problems)

    def totals(self, limit: int = DEFAULT_LIMIT) -> ClassTallies:
        """The runs of the `limit` classes that ran last (`domain.class_cap`) since each
        last started running (its figures expire when it doesn't run for the retention):
        the counters `/metrics` exports."""
        return self._read(limit, lambda queue, name: (keys.metrics_total(queue, name),))

    def over_hours(self, now: float, hours: int, limit: int = DEFAULT_LIMIT) -> ClassTallies:
        """The runs of the `limit` classes that ran last in the last `hours` hours up to
        `now` (`domain.class_metrics.window`: its whole hours' hashes, and its oldest hour's
        minutes that are in)."""
        span = window(now, hours)
        return self._read(limit, lambda queue, name: (
            *(keys.metrics_hour(queue, name, hour) for hour in span.hours),
            *(keys.metrics_minute(queue, name, minute) for minute in span.minutes),
        ))  # fmt: skip

    def _read(self, limit: int, keys_of: Callable[[str, str], Iterable[str]]) -> ClassTallies:
        """The hashes `keys_of` names for each covered class on each queue it ran on, merged
        by class."""
        registries, unread = self._registries()
        chosen = covered(registries, limit)
        wanted = [
            (key, name)
            for queue, names in registries.items()
            for name in sorted(chosen.names.intersection(names))
            for key in keys_of(queue, name)
        ]
        tallies, problems = _merged(self.client, wanted)
        return ClassTallies(tallies, unread | problems, chosen.left_out)

    def by_minute(self, class_name: str, now: float, hours: int) -> dict[int, Tally]:
        """One class's runs per minute (since the epoch) over the last `hours` hours, for a
        chart; minutes without runs are left out."""
        minutes = range(window(now, hours).first_minute, minute_of(now) + 1)
        wanted = [
            (keys.metrics_minute(queue, class_name, minute), minute)
            for queue, names in self.classes().items()
            if class_name in names
            for minute in minutes
        ]
        tallies, _problems = _merged(self.client, wanted)
        return tallies


def _merged(
    client: RedisClient, wanted: Sequence[tuple[str, Group]]
) -> tuple[dict[Group, Tally], frozenset[str]]:
    """The hashes `wanted` names, each merged into its group (a class, a minute), and the
    problems met; hashes gone (expired, never written) count for nothing."""
    pipe = pipelines.pipeline(client)
    for key, _group in wanted:
        pipe.hgetall(key)
    merged: dict[Group, Tally] = {}
    problems: set[str] = set()
    for (key, group), fields in zip(wanted, replies(pipe), strict=True):
        refused = refusal(key, fields, "hash")
        tally = tally_of(fields) if fields and refused is None else None
        if refused is not None:
            problems.add(refused)
        elif fields and tally is None:
            problems.add(f"{key} holds no per-class metrics")
        if tally is not None:
            merged[group] = merged.get(group, NO_RUNS).plus(tally)
    return merged, frozenset(problems)
