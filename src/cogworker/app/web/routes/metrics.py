"""`/metrics`: what Redis holds now, in Prometheus's text format.

It reads through the dashboard's store (`adapters.dashboard_metrics`), as
the pages do, and sits behind the dashboard's auth and host check.  A key
that can't be read leaves its sample out and counts in
`cogworker_unreadable_keys`, so one bad key doesn't blank the scrape; the
process logs each such key once (a scrape comes every few seconds).  Job
classes are exported up to `Config.metrics_max_classes`, those that ran
last; `cogworker_job_classes_left_out` counts the others.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
from litestar import Request, get
from litestar.response import Response

from cogworker.adapters.dashboard_metrics import ProcessLoad, QueueLoad, read_metrics
from cogworker.adapters.dashboard_store import Counts, DashboardStore
from cogworker.app.web.context import dashboard, threaded
from cogworker.domain.class_metrics import Tally
from cogworker.domain.prometheus import (
    MEDIA_TYPE,
    Family,
    Sample,
    exposition,
    histogram_samples,
)

LOGGER = logging.getLogger("cogworker.dashboard")


@attrs.define
class FirstSeen:
    """The problems logged already, so each is logged once however often it is met."""

    #: Problems remembered at most: past it, the memory starts again (one more line each).
    limit: int = 10_000
    _seen: set[str] = attrs.field(factory=set)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def new(self, problems: Iterable[str]) -> list[str]:
        """Those of `problems` not met before, sorted; they count as met from now on."""
        with self._lock:  # scrapes run on worker threads
            fresh = sorted(set(problems) - self._seen)
            if len(self._seen) + len(fresh) > self.limit:
                self._seen.clear()
            self._seen.update(fresh)
        return fresh


_LOGGED = FirstSeen()


@get("/metrics", name="metrics")
@threaded
def metrics(request: Request[Any, Any, Any]) -> Response[str]:
    """The current figures of the dashboard's Redis, for Prometheus to scrape."""
    dash = dashboard(request)
    text = exposition(families(dash.store, dash.config.metrics_max_classes))
    return Response(text, media_type=MEDIA_TYPE)  # Litestar adds `; charset=utf-8`


def families(store: DashboardStore, max_classes: int) -> tuple[Family, ...]:
    """Every family of a scrape, read from `store` now: the job classes' of the
    `max_classes` that ran last."""
    reading = read_metrics(store, max_classes)
    for problem in _LOGGED.new(reading.problems):
        LOGGER.warning("metrics: a key left out of the scrape: %s", problem)
    return (
        *_totals(reading.counts),
        *_queues(reading.queues),
        *_processes(reading.processes),
        *_classes(reading.classes.tallies),
        _gauge("cogworker_job_classes_left_out", "Job classes with metrics whose series are "
               "left out: past metrics_max_classes, the classes that ran last are exported.",
               [Sample(value=reading.classes.left_out)]),
        _gauge("cogworker_unreadable_keys", "Keys a scrape found holding something else than "
               "cogworker writes (their samples are left out).",
               [Sample(value=len(reading.problems))]),
    )  # fmt: skip


def _totals(counts: Counts) -> tuple[Family, ...]:
    def one(value: int | None) -> list[Sample]:
        return [] if value is None else [Sample(value=value)]

    return (
        Family(name="cogworker_processed", kind="counter", samples=tuple(one(counts.processed)),
               help="Jobs run, whatever their outcome, since the counters were last reset."),
        Family(name="cogworker_failed", kind="counter", samples=tuple(one(counts.failed)),
               help="Runs that failed, since the counters were last reset."),
        _gauge("cogworker_scheduled_jobs", "Jobs waiting for their time.", one(counts.scheduled)),
        _gauge("cogworker_retry_jobs", "Failed jobs waiting for a retry.", one(counts.retries)),
        _gauge("cogworker_dead_jobs", "Jobs in the dead set.", one(counts.dead)),
        _gauge("cogworker_processes", "Worker processes registered.", one(counts.processes)),
    )  # fmt: skip


def _queues(loads: Sequence[QueueLoad]) -> tuple[Family, ...]:
    readable = [load for load in loads if load.size is not None and load.latency is not None]
    return (
        _gauge("cogworker_queue_jobs", "Jobs waiting in a queue.",
               [Sample(value=load.size or 0, labels=(("queue", load.name),)) for load in readable]),
        _gauge("cogworker_queue_latency_seconds", "How long a queue's oldest job has waited.",
               [Sample(value=load.latency or 0.0, labels=(("queue", load.name),))
                for load in readable]),
        _gauge("cogworker_queue_paused", "1 while a queue is paused (no job of it starts).",
               [Sample(value=int(load.paused), labels=(("queue", load.name),))
                for load in readable]),
    )  # fmt: skip


def _processes(processes: Sequence[ProcessLoad]) -> tuple[Family, ...]:
    def labels(process: ProcessLoad) -> tuple[tuple[str, str], ...]:
        return (("identity", process.identity), ("hostname", process.hostname))

    return (
        _gauge("cogworker_process_busy", "Threads of a process running a job now.",
               [Sample(value=process.busy, labels=labels(process)) for process in processes]),
        _gauge("cogworker_process_concurrency", "Jobs a process runs at once, at most.",
               [Sample(value=process.concurrency, labels=labels(process))
                for process in processes if process.concurrency]),
    )  # fmt: skip


def _classes(tallies: Mapping[str, Tally]) -> tuple[Family, ...]:
    named = sorted(tallies.items())

    def counter(name: str, help_text: str, value_of: Callable[[Tally], int]) -> Family:
        samples = tuple(Sample(value=value_of(tally), labels=(("class", class_name),))
                        for class_name, tally in named)  # fmt: skip
        return Family(name=name, kind="counter", help=help_text, samples=samples)

    return (
        counter("cogworker_job_runs", "Runs of a job class, whatever their outcome, since its "
                "figures began (they expire after metrics_retention without a run).",
                lambda tally: tally.runs),
        counter("cogworker_job_failures", "Runs of a job class that failed, since its figures "
                "began.", lambda tally: tally.failures),
        Family(name="cogworker_job_execution_seconds", kind="histogram",
               help="How long runs of a job class took, since its figures began.",
               samples=tuple(sample for class_name, tally in named
                             for sample in histogram_samples(tally, (("class", class_name),)))),
    )  # fmt: skip


def _gauge(name: str, help_text: str, samples: Sequence[Sample]) -> Family:
    return Family(name=name, kind="gauge", help=help_text, samples=tuple(samples))
