"""Running a job's own code: its class, the server middleware, its `perform`.

Everything the job's code raises ends here as the run's error, a
`BaseException` too (`SystemExit`, `sys.exit()`, `KeyboardInterrupt`,
`GeneratorExit`, a module that exits at import): on a processor thread it
can only be the job's, because the worker's own stop never raises there
(its signal handlers run on the main thread and only set a flag).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Sequence

import attrs

from cogworker.adapters import user_hooks
from cogworker.app.job import Job, load_job_class
from cogworker.app.middleware import RunContext, ServerMiddleware, server_chain
from cogworker.domain import failure
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON
from cogworker.exceptions import UnknownJobClassError

#: Asks the job class's `retry_in` hook about a failure as soon as `perform` raises
#: (the error, the job's class if loaded).
Ask = Callable[[BaseException, "type | None"], failure.HookAnswer]


@attrs.frozen(kw_only=True)
class Attempt:
    """How one run ended: the error (None on success) and what `retry_in` said of it, if
    it was asked when `perform` raised."""

    job_class: type | None
    started_at: float
    ended_at: float
    error: BaseException | None = None
    answer: failure.HookAnswer | None = None


@attrs.frozen(kw_only=True)
class Runner:
    """What a run needs besides its job: the worker's middleware, identity, clock and allow-list."""

    middleware: Sequence[ServerMiddleware]
    identity: str
    clock: Callable[[], float]
    job_modules: tuple[str, ...] | None

    def run(self, job: JobRecord, queue: str, ask: Ask) -> Attempt:
        """Run `job` through the middleware; whatever its code raises is the attempt's error."""
        job_class, load_error = self._load(job.class_name)
        answers: list[failure.HookAnswer] = []

        def perform(ctx: RunContext) -> None:
            if job_class is None:
                raise load_error or UnknownJobClassError(job.class_name)
            try:
                _perform(job_class, job.jid, ctx.args)
            except BaseException as error:
                # Asked now, before any middleware sees the failure; a hook
                # that raises instead is met again, and handled, at settlement.
                with contextlib.suppress(BaseException):
                    answers.append(ask(error, job_class))
                raise

        ctx = RunContext(job=job, queue=queue, job_class=job_class, identity=self.identity)
        attempt = Attempt(job_class=job_class, started_at=self.clock(), ended_at=0.0)
        try:
            server_chain(self.middleware, ctx, perform)()
        except BaseException as error:  # the job's own: see the module's docstring
            first = answers[0] if answers else None
            return attrs.evolve(attempt, ended_at=self.clock(), error=error, answer=first)
        return attrs.evolve(attempt, ended_at=self.clock())

    def _load(self, path: str) -> tuple[type[Job] | None, UnknownJobClassError | None]:
        """The job's class, or why it can't be had (not allowed, not found, its import failed)."""
        try:
            return load_job_class(path, self.job_modules), None
        except UnknownJobClassError as error:
            return None, error
        except BaseException as error:  # a module that exits at import
            summary = user_hooks.summary(error)
            return None, UnknownJobClassError(f"{path}: importing it raised {summary}")


def _perform(job_class: type[Job], jid: str, args: Sequence[JSON]) -> None:
    """One call of the job's `perform`; one that hands back work instead of doing it fails.

    Its body never ran: a coroutine or generator was made and not driven.
    """
    instance = job_class()
    instance.jid = jid
    perform: Callable[..., object] = instance.perform  # user code may return anything
    returned = perform(*args)
    if inspect.iscoroutine(returned) or inspect.isgenerator(returned):
        returned.close()  # no "never awaited" warning: it is reported here instead
    undriven = (inspect.isawaitable, inspect.isgenerator, inspect.isasyncgen)
    if any(check(returned) for check in undriven):
        raise TypeError(
            f"{job_class.__qualname__}.perform returned {type(returned).__name__} "
            "instead of running: async jobs are not supported yet, define it with def"
        )
