"""`/metrics`: what Redis holds now, in Prometheus's text format.

It reads through the dashboard's store, as the pages do, so it sits behind
the dashboard's auth and host check.  A scrape costs seven round trips
whatever the number of queues and processes (each store read is one
pipeline); the commands grow with them (docs/metrics.md has the figures).
A key that can't be read leaves its sample out and counts in
`cogworker_unreadable_keys`, so one bad key doesn't blank the scrape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litestar import Request, get
from litestar.response import Response

from cogworker.adapters.dashboard_processes import ProcessInfo
from cogworker.adapters.dashboard_store import Counts, DashboardStore
from cogworker.adapters.flagged_reads import count_of
from cogworker.adapters.tracking import QueueLoad
from cogworker.app.web.context import dashboard, threaded
from cogworker.domain.prometheus import MEDIA_TYPE, Family, Sample, exposition


@get("/metrics", name="metrics")
@threaded
def metrics(request: Request[Any, Any, Any]) -> Response[str]:
    """The current figures of the dashboard's Redis, for Prometheus to scrape."""
    text = exposition(families(dashboard(request).store))
    return Response(text, media_type=MEDIA_TYPE)  # Litestar adds `; charset=utf-8`


def families(store: DashboardStore) -> tuple[Family, ...]:
    """Every family of a scrape, read from `store` now."""
    counts = store.counts()
    loads = store.queues.loads(store.now())
    processes = store.processes.infos()
    # A key two reads met (a queue: its size for the totals, then for its own) counts once.
    problems = {*counts.problems, *(load.problem for load in loads if load.problem)}
    problems.update(problem for info in processes for problem in info.problems)
    return (
        *_totals(counts),
        *_queues(loads),
        *_processes(processes),
        _gauge("cogworker_unreadable_keys", "Keys a scrape found holding something else than "
               "cogworker writes (their samples are left out).", [Sample(value=len(problems))]),
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
    )  # fmt: skip


def _processes(infos: Sequence[ProcessInfo]) -> tuple[Family, ...]:
    def labels(info: ProcessInfo) -> tuple[tuple[str, str], ...]:
        return (("identity", info.identity), ("hostname", info.fields.get("hostname", "")))

    concurrency = [(info, count_of(info.fields.get("concurrency"))) for info in infos]
    return (
        _gauge("cogworker_process_busy", "Threads of a process running a job now.",
               [Sample(value=info.busy, labels=labels(info)) for info in infos]),
        _gauge("cogworker_process_concurrency", "Jobs a process runs at once, at most.",
               [Sample(value=threads, labels=labels(info))
                for info, threads in concurrency if threads]),
    )  # fmt: skip


def _gauge(name: str, help_text: str, samples: Sequence[Sample]) -> Family:
    return Family(name=name, kind="gauge", help=help_text, samples=tuple(samples))
