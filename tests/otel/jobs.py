"""Job classes and the APP config of the tracing tests.

The worker process (`cogworker work tests.otel.jobs:config`) traces every
run with `cogworker.contrib.otel` and writes each finished span as a line of
JSON to the file named by `$COGWORKER_TEST_SPANS` (the test reads them back).
"""

from __future__ import annotations

import os

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

import cogworker
from cogworker import Job
from cogworker.contrib import otel

SPANS_FILE_ENV = "COGWORKER_TEST_SPANS"


def _one_line(span: ReadableSpan) -> str:
    return span.to_json(indent=None) + "\n"


def _provider() -> TracerProvider:
    # Opened for the worker's whole life; each span is written and flushed as it ends.
    spans = open(os.environ.get(SPANS_FILE_ENV, os.devnull), "a")  # noqa: SIM115
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(ConsoleSpanExporter(out=spans, formatter=_one_line))
    )
    return provider


PROVIDER = _provider()

config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.2,
    shutdown_timeout=2.0,
    server_middleware=otel.run_middleware(PROVIDER),
)


class Traced(Job):
    """Succeeds, inside a span of its own (a child of the run's)."""

    def perform(self, label: str) -> None:
        with PROVIDER.get_tracer("tests").start_as_current_span(f"inside {label}"):
            pass


class TracedAsync(Job):
    """`Traced` as an ``async def`` job, run on the worker's event loop."""

    async def perform(self, label: str) -> None:
        with PROVIDER.get_tracer("tests").start_as_current_span(f"inside {label}"):
            pass


class TracedFails(Job, retry=False):
    """Raises, straight to dead."""

    def perform(self, label: str) -> None:
        raise ValueError(f"boom {label}")


class TracedRetried(TracedFails, retry=1):
    """Fails twice: its run, then its one retry a moment later; then dead."""

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, object]) -> float:
        return 0.1
