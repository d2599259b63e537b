"""Tracing across processes: the enqueuing process's span is the parent of the run's span in
a real worker process, for sync, async, failing and retried jobs; cogworker works without
OpenTelemetry installed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.contrib import otel
from tests.app.helpers import with_async_client
from tests.otel.jobs import SPANS_FILE_ENV, Traced, TracedAsync, TracedFails, TracedRetried
from tests.support.processes import CogworkerFactory, child_environment, wait_until

#: The jobs enqueued, by the label each is given as its argument.
CLASSES: dict[str, type[cogworker.Job]] = {
    "sync": Traced, "async": TracedAsync, "fails": TracedFails, "retried": TracedRetried,
}  # fmt: skip


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    """Where the enqueuing side's spans end up."""
    return InMemorySpanExporter()


@pytest.fixture
def traced_client(redis_url: str, exporter: InMemorySpanExporter) -> Iterator[cogworker.Client]:
    """A Client whose enqueues are traced into `exporter`."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    config = cogworker.Config(
        redis_url=redis_url, client_middleware=(otel.TraceEnqueues(provider),)
    )
    client = cogworker.Client(config)
    yield client
    client.close()


def _spans(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _runs(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The run spans written so far, by jid and retry count."""
    return {
        (span["attributes"]["cogworker.job.jid"], span["attributes"]["cogworker.job.retry_count"]):
        span for span in _spans(path) if span["kind"] == "SpanKind.CONSUMER"
    }  # fmt: skip


def _hex(number: int, digits: int) -> str:
    return f"0x{number:0{digits}x}"


def test_each_run_span_is_a_child_of_its_enqueue_span(
    tmp_path: Path,
    redis_url: str,
    rc: redis.Redis,
    cogworker_factory: CogworkerFactory,
    traced_client: cogworker.Client,
    exporter: InMemorySpanExporter,
) -> None:
    """Sync, async, failing and retried jobs: a CONSUMER span per run, parented across the
    process boundary to the PRODUCER span that enqueued it, with the job's attributes and
    outcome; spans the job starts are children of its run span."""
    jids = {label: traced_client.enqueue(job_class, label) for label, job_class in CLASSES.items()}
    enqueued = {
        span.attributes["cogworker.job.jid"]: span for span in exporter.get_finished_spans()
    }
    assert set(enqueued) == set(jids.values())
    assert {span.kind for span in enqueued.values()} == {SpanKind.PRODUCER}
    spans_file = tmp_path / "spans.jsonl"
    worker = cogworker_factory(
        "tests.otel.jobs:config", redis_url=redis_url, env={SPANS_FILE_ENV: str(spans_file)}
    )
    wait_until(lambda: rc.zcard("cogworker:{q:default}:dead") == 2, 30.0, message=worker.log_tail)
    wait_until(lambda: len(_runs(spans_file)) == 5, 10.0, message=worker.log_tail)
    runs = _runs(spans_file)
    for label, retry_count in [("sync", 0), ("async", 0), ("fails", 0), ("retried", 0),
                               ("retried", 1)]:  # fmt: skip
        jid = jids[label]
        run, parent = runs[jid, retry_count], enqueued[jid].context
        assert run["parent_id"] == _hex(parent.span_id, 16), label
        assert run["context"]["trace_id"] == _hex(parent.trace_id, 32), label
        assert run["attributes"] == {
            "messaging.system": "cogworker",
            "messaging.destination.name": "default",
            "messaging.message.id": jid,
            "cogworker.job.class": CLASSES[label].class_path(),
            "cogworker.job.queue": "default",
            "cogworker.job.jid": jid,
            "cogworker.job.retry_count": retry_count,
            "cogworker.job.outcome": "succeeded" if label in ("sync", "async") else "failed",
        }
    inside = {span["name"]: span for span in _spans(spans_file) if span["name"].startswith("in")}
    assert inside["inside sync"]["parent_id"] == runs[jids["sync"], 0]["context"]["span_id"]
    assert inside["inside async"]["parent_id"] == runs[jids["async"], 0]["context"]["span_id"]
    failed = runs[jids["fails"], 0]
    assert failed["status"]["status_code"] == "ERROR"
    (event,) = failed["events"]
    assert event["name"] == "exception"
    assert event["attributes"]["exception.type"] == "ValueError"
    assert event["attributes"]["exception.message"] == "boom fails"


@pytest.mark.processes
def test_cogworker_runs_without_opentelemetry_installed() -> None:
    """With OpenTelemetry unimportable (the extra not installed), cogworker, its CLI, worker
    and dashboard import, and a client enqueues in testing mode; only contrib needs it."""
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # any import of it now fails\n"
        "import cogworker, cogworker.app.cli, cogworker.app.web, cogworker.app.worker.manager\n"
        "from tests.app.jobs import Count\n"
        "with cogworker.testing.fake() as queue:\n"
        "    Count.perform_async(1)\n"
        "print(len(queue.jobs))\n"
        "try:\n"
        "    import cogworker.contrib.otel\n"
        "except ImportError as error:\n"
        "    print('contrib:', type(error).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=child_environment())  # fmt: skip
    assert out.stdout.split("\n") == ["1", "contrib: ModuleNotFoundError", ""]


def test_the_async_client_carries_the_enqueue_span_too(
    redis_url: str, rc: redis.Redis, exporter: InMemorySpanExporter
) -> None:
    """Through an AsyncClient the same middleware writes its span's context into the job."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    config = cogworker.Config(
        redis_url=redis_url, client_middleware=(otel.TraceEnqueues(provider),)
    )
    jid = with_async_client(config, lambda client: client.enqueue(Traced, "async client"))
    (span,) = exporter.get_finished_spans()
    (stored,) = rc.lrange(keys.queue("default"), 0, -1)
    carried = json.loads(stored)[otel.TRACE_CONTEXT_KEY]["traceparent"]
    assert span.attributes["cogworker.job.jid"] == jid
    version, trace_id, parent_id, _flags = carried.split("-")
    assert (version, trace_id, parent_id) == (
        "00",
        f"{span.context.trace_id:032x}",
        f"{span.context.span_id:016x}",
    )
