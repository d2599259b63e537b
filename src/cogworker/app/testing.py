"""Testing modes: run jobs in the caller (`inline`) or collect them (`fake`).

::

    with cogworker.testing.inline():
        SendEvent.perform_async(42)      # runs now; its error is raised here

    with cogworker.testing.fake() as queue:
        SendEvent.perform_async(42)
        assert queue.jobs_for(SendEvent)[0].args == (42,)
        queue.drain()                    # runs what was pushed, in order

Either way the arguments make a JSON round trip first, so a test sees what a
real worker would get.  No Redis is touched, no retry or death hook runs;
test a hook by calling the classmethod directly.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import attrs

from cogworker.app.job import Job, load_job_class
from cogworker.domain.job import JobRecord


class _Mode(Protocol):
    def push(self, job: JobRecord) -> str | None: ...


def run_now(job: JobRecord) -> None:
    """Run `job` in this thread as a worker would (after a JSON round trip of its args)."""
    instance = load_job_class(job.class_name)()
    instance.jid = job.jid
    instance.perform(*json.loads(json.dumps(list(job.args))))


class _Inline:
    def push(self, job: JobRecord) -> str | None:
        run_now(job)
        return job.jid


@attrs.define
class FakeQueue:
    """The jobs pushed while `fake()` is active, in push order."""

    jobs: list[JobRecord] = attrs.field(factory=list)

    def push(self, job: JobRecord) -> str | None:
        """Collect `job` (what `Client.push` does in fake mode)."""
        self.jobs.append(attrs.evolve(job, args=tuple(json.loads(json.dumps(list(job.args))))))
        return job.jid

    def jobs_for(self, job_class: type[Job]) -> list[JobRecord]:
        """The collected jobs of one class."""
        return [job for job in self.jobs if job.class_name == job_class.class_path()]

    def drain(self) -> int:
        """Run every collected job (and those they push) until none is left; how many ran."""
        ran = 0
        while self.jobs:
            run_now(self.jobs.pop(0))
            ran += 1
        return ran

    def clear(self) -> None:
        """Forget every collected job."""
        self.jobs.clear()


_lock = threading.Lock()
_modes: list[_Mode] = []


def current_mode() -> _Mode | None:
    """The testing mode in force, or None (real pushes)."""
    return _modes[-1] if _modes else None


@contextmanager
def _using(mode: _Mode) -> Iterator[None]:
    with _lock:
        _modes.append(mode)
    try:
        yield
    finally:
        with _lock:
            _modes.remove(mode)


@contextmanager
def inline() -> Iterator[None]:
    """Within the block, every enqueue runs the job at once and raises its error."""
    with _using(_Inline()):
        yield


@contextmanager
def fake() -> Iterator[FakeQueue]:
    """Within the block, enqueues are collected in the `FakeQueue` yielded."""
    queue = FakeQueue()
    with _using(queue):
        yield queue
