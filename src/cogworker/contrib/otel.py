"""OpenTelemetry tracing: a span per enqueue, a span per run, the run a child of the enqueue.

Needs the `otel` extra (`pip install cogworker[otel]`); nothing else in
cogworker imports this module, so OpenTelemetry is loaded only by those who
use it.  Spans go to the global tracer provider unless one is given::

    from cogworker.contrib import otel

    config = cogworker.Config(
        client_middleware=(otel.TraceEnqueues(),),
        server_middleware=otel.run_middleware(),
    )

`TraceEnqueues` starts a PRODUCER span around each push and writes its
context into the job (W3C `traceparent`, under the payload key
`TRACE_CONTEXT_KEY`); the job carries it through retries.  `run_middleware`
starts a CONSUMER span per run, parented to that context, on the thread
or event loop the job runs on, so spans the job itself starts are its children.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import attrs
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer, TracerProvider

from cogworker.app.job_base import is_async_job
from cogworker.app.middleware import AsyncCallNext, CallNext, Push, RunContext, ServerMiddleware
from cogworker.app.version import VERSION
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON

#: The payload key holding the enqueuing span's context (a dict of text headers).
TRACE_CONTEXT_KEY = "trace_context"
INSTRUMENTATION = "cogworker.contrib.otel"


def _tracer(provider: TracerProvider | None) -> Tracer:
    return trace.get_tracer(INSTRUMENTATION, VERSION, tracer_provider=provider)


def _job_attributes(job: JobRecord, queue: str) -> dict[str, str | int]:
    return {
        "messaging.system": "cogworker",
        "messaging.destination.name": queue,
        "messaging.message.id": job.jid,
        "cogworker.job.class": job.class_name,
        "cogworker.job.queue": queue,
        "cogworker.job.jid": job.jid,
        "cogworker.job.retry_count": job.retries_made,
    }


@attrs.define
class TraceEnqueues:
    """Client middleware: a span per enqueue, its context carried in the job."""

    tracer_provider: TracerProvider | None = None

    def __call__(self, job: JobRecord, push: Push) -> str | None:
        tracer = _tracer(self.tracer_provider)
        attributes = _job_attributes(job, job.queue)
        with tracer.start_as_current_span(
            f"enqueue {job.class_name}", kind=SpanKind.PRODUCER, attributes=attributes
        ):
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            headers: dict[str, JSON] = {**carrier}
            traced = attrs.evolve(job, extra={**job.extra, TRACE_CONTEXT_KEY: headers})
            return push(traced)


@contextmanager
def _run_span(tracer: Tracer, ctx: RunContext) -> Iterator[Span]:
    """The span of one run, current while the job runs; its outcome and exception recorded."""
    parent = propagate.extract(_carrier(ctx.job.extra.get(TRACE_CONTEXT_KEY)))
    attributes = _job_attributes(ctx.job, ctx.queue)
    with tracer.start_as_current_span(
        f"run {ctx.job.class_name}", context=parent, kind=SpanKind.CONSUMER,
        attributes=attributes, record_exception=False, set_status_on_exception=False,
    ) as span:  # fmt: skip
        try:
            yield span
        except BaseException as error:
            span.set_attribute("cogworker.job.outcome", "failed")
            span.record_exception(error)
            span.set_status(StatusCode.ERROR, f"{type(error).__name__}: {error}")
            raise
        span.set_attribute("cogworker.job.outcome", "succeeded")


def _carrier(stored: object) -> Mapping[str, str]:
    """The stored context as text headers (anything else in the key: no parent)."""
    if not isinstance(stored, Mapping):
        return {}
    return {key: value for key, value in stored.items() if isinstance(value, str)}


@attrs.define
class TraceSyncRuns:
    """Server middleware: a span per run of a sync job (async jobs: `TraceAsyncRuns`)."""

    tracer_provider: TracerProvider | None = None

    def __call__(self, ctx: RunContext, run: CallNext) -> None:
        if ctx.job_class is not None and is_async_job(ctx.job_class):
            run()  # traced on the event loop, where its own spans are started
            return
        with _run_span(_tracer(self.tracer_provider), ctx):
            run()


@attrs.define
class TraceAsyncRuns:
    """Async server middleware: a span per run of an ``async def`` job, on the event loop."""

    tracer_provider: TracerProvider | None = None

    async def __call__(self, ctx: RunContext, run: AsyncCallNext) -> None:
        with _run_span(_tracer(self.tracer_provider), ctx):
            await run()


def run_middleware(tracer_provider: TracerProvider | None = None) -> tuple[ServerMiddleware, ...]:
    """The server middleware that traces every run, sync and async jobs alike."""
    return (TraceSyncRuns(tracer_provider), TraceAsyncRuns(tracer_provider))
