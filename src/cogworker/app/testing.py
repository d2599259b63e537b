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

A job keeping its result (`keep_result`) keeps it in the mode, for
`Client.result` within the block: its return value, checked as a worker
checks it (a value JSON can't carry raises `UnstorableResultError`).  A job
that raised keeps nothing (inline raises its error instead); a job `fake()`
collected and didn't run yet times out at once (there is no worker to wait
for: `drain` first).  A result doesn't expire within the block.

An async job (``async def perform``) runs to its end too.  From sync code
it gets an event loop of its own (`asyncio.run`); from async code, await it:
``await SendEvent.aperform_async(42)`` runs it under `inline()`, and
``await queue.adrain()`` drains a `fake()` queue.  A sync entry point
(`perform_async`, `drain`) meeting an async job while this thread's loop
runs can't finish it, and raises a RuntimeError saying so.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import attrs
from returns.pipeline import is_successful

from cogworker.app.job_base import JobBase, is_async_job, perform_awaited, perform_now
from cogworker.app.job_loading import load_job_class
from cogworker.domain import results
from cogworker.domain.job import JobRecord
from cogworker.exceptions import UnstorableResultError


class _Mode(Protocol):
    def push(self, job: JobRecord) -> str | None: ...

    async def apush(self, job: JobRecord) -> str | None: ...

    def result(self, jid: str) -> results.Stored | str: ...


def run_now(job: JobRecord) -> object:
    """Run `job` in this thread as a worker would (after a JSON round trip of its args);
    an async job to its end, on an event loop of its own.  What it returned."""
    job_class, args = _prepared(job)
    if not is_async_job(job_class):
        return perform_now(job_class, job.jid, args)
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop runs in this thread: one of its own can
        return asyncio.run(perform_awaited(job_class, job.jid, args))
    name = job_class.__qualname__
    raise RuntimeError(
        f"{name} is an async job and this thread's event loop is running, so it can't be "
        f"run to its end here: await it (`await {name}.aperform_async(...)` under inline(), "
        "`await queue.adrain()` under fake())"
    )


async def arun_now(job: JobRecord) -> object:
    """`run_now` from async code: an async job is awaited, a sync one called."""
    job_class, args = _prepared(job)
    if is_async_job(job_class):
        return await perform_awaited(job_class, job.jid, args)
    return perform_now(job_class, job.jid, args)


def kept_result(job: JobRecord, returned: object) -> results.Stored | None:
    """The result `job` keeps of `returned` (None when it keeps none), checked as a worker
    checks it: `UnstorableResultError` for a value a result can't hold."""
    if results.keep_of(job) is None:
        return None
    encoded = results.encoded_value(returned, results.DEFAULT_MAX_BYTES)
    if not is_successful(encoded):
        raise UnstorableResultError(f"{job.class_name}.perform: {encoded.failure()}")
    return results.Stored(outcome="success", value=json.loads(encoded.unwrap()))


@attrs.define
class _Results:
    """The results jobs kept in a testing mode, by jid."""

    kept: dict[str, results.Stored] = attrs.field(factory=dict)

    def keep(self, job: JobRecord, returned: object) -> None:
        stored = kept_result(job, returned)
        if stored is not None:
            self.kept[job.jid] = stored

    def found(self, jid: str, pending: bool = False) -> results.Stored | str:
        if jid in self.kept:
            return self.kept[jid]
        return "timed out" if pending else "not found"


def _prepared(job: JobRecord) -> tuple[type[JobBase], list[Any]]:
    """The job's class and its arguments after a JSON round trip."""
    return load_job_class(job.class_name), json.loads(json.dumps(list(job.args)))


@attrs.define
class _Inline:
    _results: _Results = attrs.field(factory=_Results)

    def push(self, job: JobRecord) -> str | None:
        self._results.keep(job, run_now(job))
        return job.jid

    async def apush(self, job: JobRecord) -> str | None:
        self._results.keep(job, await arun_now(job))
        return job.jid

    def result(self, jid: str) -> results.Stored | str:
        return self._results.found(jid)


@attrs.define
class FakeQueue:
    """The jobs pushed while `fake()` is active, in push order."""

    jobs: list[JobRecord] = attrs.field(factory=list)
    _results: _Results = attrs.field(factory=_Results)

    def push(self, job: JobRecord) -> str | None:
        """Collect `job` (what `Client.push` does in fake mode)."""
        self.jobs.append(attrs.evolve(job, args=tuple(json.loads(json.dumps(list(job.args))))))
        return job.jid

    async def apush(self, job: JobRecord) -> str | None:
        """Collect `job` (what `AsyncClient.push` does in fake mode)."""
        return self.push(job)

    def jobs_for(self, job_class: type[JobBase]) -> list[JobRecord]:
        """The collected jobs of one class."""
        return [job for job in self.jobs if job.class_name == job_class.class_path()]

    def drain(self) -> int:
        """Run every collected job (and those they push) until none is left; how many ran.

        An async job runs on an event loop of its own: from async code, use `adrain`."""
        ran = 0
        while self.jobs:
            job = self.jobs.pop(0)
            self._results.keep(job, run_now(job))
            ran += 1
        return ran

    async def adrain(self) -> int:
        """`drain` from async code: async jobs are awaited; how many ran."""
        ran = 0
        while self.jobs:
            job = self.jobs.pop(0)
            self._results.keep(job, await arun_now(job))
            ran += 1
        return ran

    def result(self, jid: str) -> results.Stored | str:
        """A drained job's kept result (what `Client.result` reads in fake mode); one still
        collected hasn't ended ("timed out"), any other is "not found"."""
        return self._results.found(jid, pending=any(job.jid == jid for job in self.jobs))

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
