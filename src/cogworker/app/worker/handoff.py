"""The hand-off of a fetch's jobs: the async ones to the event loop, the others to the
processor threads, each job decoded and its class loaded once, on the fetcher's thread.

The async jobs of one fetch go over in one batch (one wake-up of the loop),
not through a processor thread each: that hop, and a thread-to-loop call
per job, cost more than the jobs' own work in the I/O-bound benchmark
(docs/benchmarks.md).  A job the loop can't take (it isn't an async job,
its payload isn't readable, it expired, its class doesn't load, or this
process runs no loop) goes to a processor thread, which files it as before.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence

import attrs
from returns.pipeline import is_successful
from returns.result import Result

from cogworker.adapters.jobs.fetch import Fetched
from cogworker.app.job_base import JobBase, is_async_job
from cogworker.app.worker.event_loop import EventLoop, Start
from cogworker.app.worker.running import load_class
from cogworker.domain import limits, payload
from cogworker.domain.job import JobRecord

#: A job's class, or why it can't be had (see `running.load_class`).
Loaded = tuple[type[JobBase] | None, BaseException | None]


@attrs.frozen
class Taken:
    """A fetched job on its way to a processor thread, read once."""

    fetched: Fetched
    decoded: Result[JobRecord, payload.PayloadError]
    #: Whether it had expired when read (then its class isn't loaded).
    expired: bool = False
    loaded: Loaded = (None, None)


@attrs.define
class HandOff:
    """Hands each fetch's jobs over: async ones to `event_loop`, the others to `work`."""

    work: queue.SimpleQueue[Taken | None]
    event_loop: EventLoop | None
    #: What runs an async job on the loop (`Processor.on_loop`).
    on_loop: Callable[[JobRecord, Fetched, type[JobBase]], Start]
    job_modules: tuple[str, ...] | None
    clock: Callable[[], float]

    def __call__(self, fetched: Sequence[Fetched]) -> None:
        """Hand `fetched` over (called by the fetcher once the jobs are held)."""
        for_loop: list[Start] = []
        for one in fetched:
            taken = self._read(one)
            job_class = taken.loaded[0]
            if self.event_loop is not None and job_class is not None and is_async_job(job_class):
                for_loop.append(self.on_loop(taken.decoded.unwrap(), one, job_class))
            else:
                self.work.put(taken)
        if for_loop:
            assert self.event_loop is not None  # only filled when there is one
            self.event_loop.admit(for_loop)

    def _read(self, fetched: Fetched) -> Taken:
        decoded = payload.decode(fetched.raw)
        if not is_successful(decoded):
            return Taken(fetched, decoded)
        job = decoded.unwrap()
        if limits.is_expired(job, self.clock()):
            return Taken(fetched, decoded, expired=True)  # dropped unrun: no class imported
        return Taken(fetched, decoded, loaded=load_class(job.class_name, self.job_modules))
