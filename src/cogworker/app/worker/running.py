"""Running a job's own code: its class, the server middleware, its `perform`.

Everything the job's code raises ends here as the run's error, a
`BaseException` too (`SystemExit`, `sys.exit()`, `KeyboardInterrupt`,
`GeneratorExit`, a module that exits at import): on a processor thread it
can only be the job's, because the worker's own stop never raises there
(its signal handlers run on the main thread and only set a flag).

An async job (`async def perform`) runs on the worker's event loop
(`run_async`), where the one exception that isn't the job's is the
cancellation a stop sends once `shutdown_timeout` is up: it propagates, and
the job, unsettled, goes back to its queue.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs
from returns.pipeline import is_successful

from cogworker.adapters import user_hooks
from cogworker.app.job_base import JobBase, perform_awaited, perform_now
from cogworker.app.job_loading import load_job_class
from cogworker.app.middleware import (
    AsyncServerMiddleware,
    RunContext,
    ServerMiddleware,
    SyncServerMiddleware,
    async_server_chain,
    server_chain,
    split_layers,
)
from cogworker.app.worker.interrupts import Interrupts
from cogworker.domain import failure, payload, results
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.exceptions import JobCancelledError, UnknownJobClassError, UnstorableResultError

#: Asks the job class's `retry_in` hook about a failure as soon as `perform` raises
#: (the error, the job's class if loaded).
Ask = Callable[[BaseException, "type | None"], failure.HookAnswer]
#: The same, from the event loop (an async hook is awaited there).
AskAsync = Callable[[BaseException, "type | None"], Awaitable[failure.HookAnswer]]


@attrs.frozen(kw_only=True)
class Attempt:
    """How one run ended: the error (None on success) and what `retry_in` said of it, if
    it was asked when `perform` raised."""

    job_class: type | None
    started_at: float
    ended_at: float
    error: BaseException | None = None
    answer: failure.HookAnswer | None = None
    #: What it returned as JSON, when its job keeps its result (`domain.results`).
    result: str | None = None


@attrs.define
class _Notes:
    """What a run's `perform` left to settle it by: its kept result (the last `perform`'s,
    under middleware that calls it again) and `retry_in`'s answer to its error (the first)."""

    result: str | None = None
    answer: failure.HookAnswer | None = None

    def attempt(
        self, job_class: type | None, start: float, end: float, error: BaseException | None
    ) -> Attempt:
        """The run as it ended: raised `error` (with the answer), or returned (with the result)."""
        answer, result = (self.answer, None) if error is not None else (None, self.result)
        return Attempt(
            job_class=job_class,
            started_at=start,
            ended_at=end,
            error=error,
            answer=answer,
            result=result,
        )


@attrs.frozen(kw_only=True)
class Runner:
    """What a run needs besides its job: the worker's middleware, identity, clock and allow-list."""

    middleware: Sequence[ServerMiddleware]
    identity: str
    clock: Callable[[], float]
    job_modules: tuple[str, ...] | None
    #: Where a cancel (or a time limit) reaches the job's perform.
    interrupts: Interrupts = attrs.field(factory=Interrupts)
    #: The largest result kept (`Config.max_result_bytes`).
    max_result_bytes: int = results.DEFAULT_MAX_BYTES
    #: `middleware` split once, not at every run: (sync layers, async layers).
    _layers: tuple[tuple[SyncServerMiddleware, ...], tuple[AsyncServerMiddleware, ...]] = (
        attrs.field(init=False)
    )

    @_layers.default
    def _split_middleware(
        self,
    ) -> tuple[tuple[SyncServerMiddleware, ...], tuple[AsyncServerMiddleware, ...]]:
        return split_layers(self.middleware)

    def run(
        self,
        job: JobRecord,
        queue: str,
        ask: Ask,
        loaded: tuple[type[JobBase] | None, BaseException | None],
    ) -> Attempt:
        """Run `job` through the sync middleware; whatever its code raises is the attempt's
        error.  `loaded`: its class, or why there is none (see `load_class`)."""
        job_class, load_error = loaded
        notes = _Notes()

        def perform(ctx: RunContext) -> None:
            if job_class is None:
                raise load_error or UnknownJobClassError(job.class_name)
            try:
                with self.interrupts.sync_window(job.jid):
                    returned = perform_now(job_class, job.jid, ctx.args, self._cancelled(job.jid))
                notes.result = self._result(job, job_class, returned)
            except BaseException as error:
                # Asked now, before any middleware sees the failure; a hook
                # that raises instead is met again, and handled, at settlement.
                if self.interrupts.requested(job.jid) is None and notes.answer is None:
                    with contextlib.suppress(BaseException):
                        notes.answer = ask(error, job_class)
                raise

        ctx = RunContext(job=job, queue=queue, job_class=job_class, identity=self.identity)
        started_at = self.clock()
        sync_layers, _ = self._layers  # async layers wrap async jobs only
        try:
            server_chain(sync_layers, ctx, perform)()
        except BaseException as error:  # the job's own: see the module's docstring
            return notes.attempt(job_class, started_at, self.clock(), error)
        return notes.attempt(job_class, started_at, self.clock(), None)

    async def run_async(
        self, job: JobRecord, queue: str, job_class: type[JobBase], ask: AskAsync
    ) -> Attempt:
        """Run an async job through the middleware on the running loop: the sync layers
        (outermost, on a thread of their own) and the async ones; see the module's docstring."""
        notes = _Notes()
        started_at = self.clock()
        try:
            if self.middleware:
                await self._chain_async(job, queue, job_class, ask, notes)
            else:  # no middleware: no context, no chain to go through
                await self._perform_async(job, job_class, job.args, ask, notes)
        except BaseException as error:
            task = _current_task()
            if self.interrupts.requested(job.jid) is not None:
                _undo_cancelling(task)  # this run's own cancel: settled, not a stop
            elif _stopped(task):
                raise  # the stop's cancellation: not settled, handed back
            return notes.attempt(job_class, started_at, self.clock(), error)
        return notes.attempt(job_class, started_at, self.clock(), None)

    async def _perform_async(
        self,
        job: JobRecord,
        job_class: type[JobBase],
        args: Sequence[JSON],
        ask: AskAsync,
        notes: _Notes,
    ) -> None:
        """One awaited `perform` in its cancel window; notes its result, or `retry_in`'s answer."""
        # Its own task: the job's, or (under sync layers) the one they run it in.
        task = _current_task()
        try:
            self.interrupts.open_async_window(job.jid, task)
            try:
                cancelled = self._cancelled(job.jid)
                returned = await perform_awaited(job_class, job.jid, args, cancelled)
            finally:
                self.interrupts.close_window(job.jid)
            notes.result = self._result(job, job_class, returned)
        except BaseException as error:
            asked = notes.answer is not None  # by a first perform, under middleware
            if not (asked or _stopped(task) or self.interrupts.requested(job.jid)):
                with contextlib.suppress(Exception):
                    notes.answer = await ask(error, job_class)
            raise

    def _result(self, job: JobRecord, job_class: type[JobBase], returned: object) -> str | None:
        """What `perform` returned as the JSON its job keeps (None when it keeps none);
        `UnstorableResultError`, the run's error, when a result can't hold it."""
        if results.keep_of(job) is None:
            return None
        encoded = results.encoded_value(returned, self.max_result_bytes)
        if not is_successful(encoded):
            problem = encoded.failure()
            raise UnstorableResultError(f"{job_class.__qualname__}.perform: {problem}")
        return encoded.unwrap()

    def _cancelled(self, jid: str) -> Callable[[], bool]:
        """What `Job.cancelled` asks for the run of `jid`."""
        return lambda: self.interrupts.requested(jid) is JobCancelledError

    async def _chain_async(
        self, job: JobRecord, queue: str, job_class: type[JobBase], ask: AskAsync, notes: _Notes
    ) -> None:
        sync_layers, async_layers = self._layers  # the sync layers outermost

        async def perform(ctx: RunContext) -> None:
            await self._perform_async(job, job_class, ctx.args, ask, notes)

        ctx = RunContext(job=job, queue=queue, job_class=job_class, identity=self.identity)
        if not sync_layers:
            await async_server_chain(async_layers, ctx, perform)()
            return
        loop = asyncio.get_running_loop()
        inner: list[Any] = []

        def blocking(inner_ctx: RunContext) -> None:
            chain = async_server_chain(async_layers, inner_ctx, perform)

            async def whole() -> None:
                await chain()

            inner.append(asyncio.run_coroutine_threadsafe(whole(), loop))
            inner[-1].result()

        try:
            await asyncio.to_thread(server_chain(sync_layers, ctx, blocking))
        except asyncio.CancelledError:
            for running in inner:
                running.cancel()
            raise


def asker(job: JobRecord) -> Ask:
    """What asks `job`'s class's `retry_in` about a failure (an async hook run to its end)."""

    def ask(error: BaseException, job_class: type | None) -> failure.HookAnswer:
        hook = _retry_in(job, job_class)
        if hook is None:
            return failure.NO_HOOK
        return user_hooks.ask_retry_in(hook, job.retries_made, error, payload.to_dict(job))

    return ask


def async_asker(job: JobRecord) -> AskAsync:
    """The same, for an async job: an async hook is awaited on the running loop."""

    async def ask(error: BaseException, job_class: type | None) -> failure.HookAnswer:
        hook = _retry_in(job, job_class)
        if hook is None:
            return failure.NO_HOOK
        count, entry = job.retries_made, payload.to_dict(job)
        return await user_hooks.ask_retry_in_async(hook, count, error, entry)

    return ask


def _retry_in(job: JobRecord, job_class: type | None) -> Callable[..., object] | None:
    """The class's `retry_in` hook, when it is to be asked about this failure."""
    hook: Callable[..., object] | None = getattr(job_class, "retry_in", None)
    if hook is None or not failure.hook_is_consulted(job, has_hook=True):
        return None
    return hook


def load_class(
    path: str, job_modules: tuple[str, ...] | None
) -> tuple[type[JobBase] | None, UnknownJobClassError | None]:
    """A job's class, or why it can't be had (not allowed, not found, its import failed)."""
    try:
        return load_job_class(path, job_modules), None
    except UnknownJobClassError as error:
        return None, error
    except BaseException as error:  # a module that exits at import
        summary = user_hooks.summary(error)
        return None, UnknownJobClassError(f"{path}: importing it raised {summary}")


def _current_task() -> asyncio.Task[Any]:
    task = asyncio.current_task()
    assert task is not None  # called on the loop, inside a task
    return task


def _undo_cancelling(task: asyncio.Task[Any]) -> None:
    """Forget the job's task's cancellation, so `_stopped` tells a stop's from it."""
    while task.cancelling():
        task.uncancel()


def _stopped(task: asyncio.Task[Any]) -> bool:
    """Whether the job's task is being cancelled from outside (a stop), not by the job."""
    return task.cancelling() > 0
