"""What a `/metrics` scrape reads, through the dashboard's store: the stat cards' numbers,
every queue's size and latency, every process's busy threads and concurrency, and
every job class's runs, failures and run times (merged over queues).

Ten round trips at most (each read below is one to three pipelines),
whatever the number of queues, processes and classes; the classes' figures
are read for at most a limit of them (`ClassMetricsStore.totals`).  A key
that can't be read leaves its figure None and its sentence in `problems`,
once per key.
"""

from __future__ import annotations

import attrs
import redis

from cogworker.adapters.class_metrics import ClassTallies
from cogworker.adapters.dashboard_store import Counts, DashboardStore
from cogworker.adapters.flagged_reads import count_of
from cogworker.adapters.tracking import QueueLoad as QueueLoad  # re-exported for the route
from cogworker.exceptions import RedisUnavailableError


@attrs.frozen(kw_only=True)
class ProcessLoad:
    """A registered process: its host, busy threads and concurrency (None: not a count)."""

    identity: str
    hostname: str
    busy: int
    concurrency: int | None


@attrs.frozen(kw_only=True)
class MetricsReading:
    """One scrape's figures, as read now."""

    counts: Counts
    queues: tuple[QueueLoad, ...]
    processes: tuple[ProcessLoad, ...]
    #: Each covered class's runs since its figures began (see `ClassMetricsStore.totals`).
    classes: ClassTallies
    #: The keys that can't be read as cogworker writes them, a sentence each.
    problems: frozenset[str]


def read_metrics(store: DashboardStore, max_classes: int) -> MetricsReading:
    """The figures of a scrape, of `max_classes` job classes at most; RedisUnavailableError
    if Redis doesn't answer."""
    try:
        counts = store.counts()
        loads = tuple(store.queues.loads(store.now()))
        infos = store.processes.infos()
        classes = store.class_metrics.totals(max_classes)
    except (redis.ConnectionError, redis.TimeoutError) as error:
        raise RedisUnavailableError(f"Redis did not answer: {type(error).__name__}") from error
    processes = tuple(
        ProcessLoad(identity=info.identity, hostname=info.fields.get("hostname", ""),
                    busy=info.busy, concurrency=count_of(info.fields.get("concurrency")))
        for info in infos
    )  # fmt: skip
    # A key two reads met (a queue: its size for the totals, then for its own) counts once.
    problems = {*counts.problems, *(load.problem for load in loads if load.problem)}
    problems.update(problem for info in infos for problem in info.problems)
    problems.update(classes.problems)
    return MetricsReading(counts=counts, queues=loads, processes=processes, classes=classes,
                          problems=frozenset(problems))  # fmt: skip
