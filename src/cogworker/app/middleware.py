"""Client and server middleware chains.

A client middleware wraps every push: it gets the job and `push`, may change
the job (`attrs.evolve`) before passing it on, and may stop the push by not
calling `push` (then the enqueue returns None)::

    def tag_tenant(job: JobRecord, push: Push) -> str | None:
        return push(attrs.evolve(job, extra={**job.extra, "tenant": current_tenant()}))

A server middleware wraps every run on a worker: it gets a `RunContext` and
`run`, the rest of the chain and then `perform`.  An exception from `run`
is the job's failure; let it propagate unless you mean to swallow it::

    def timed(ctx: RunContext, run: Callable[[], None]) -> None:
        started = time.monotonic()
        try:
            run()
        finally:
            metrics.observe(ctx.job.class_name, time.monotonic() - started)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from cogworker.domain.job import JobRecord

Push = Callable[[JobRecord], str | None]
ClientMiddleware = Callable[[JobRecord, Push], str | None]


@attrs.frozen(kw_only=True)
class RunContext:
    """What a server middleware knows about the run it wraps."""

    job: JobRecord
    queue: str
    #: The job's class, or None when it can't be imported (the run will fail).
    job_class: type | None
    #: The worker process running it.
    identity: str


Run = Callable[[], None]
ServerMiddleware = Callable[[RunContext, Run], None]


def client_chain(middleware: Sequence[ClientMiddleware], push: Push) -> Push:
    """`push` wrapped by `middleware`, the first entry outermost."""
    for layer in reversed(middleware):
        push = _wrap_client(layer, push)
    return push


def _wrap_client(layer: ClientMiddleware, push: Push) -> Push:
    return lambda job: layer(job, push)


def server_chain(middleware: Sequence[ServerMiddleware], ctx: RunContext, run: Run) -> Run:
    """`run` wrapped by `middleware` for one job, the first entry outermost."""
    for layer in reversed(middleware):
        run = _wrap_server(layer, ctx, run)
    return run


def _wrap_server(layer: ServerMiddleware, ctx: RunContext, run: Run) -> Run:
    return lambda: layer(ctx, run)
