"""`/metrics` after a known drain, read with Prometheus's own text parser: exact figures,
behind the dashboard's auth and host check like every page."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import httpx
import redis
from click.testing import CliRunner
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

import cogworker
from cogworker.adapters import parts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.cli import main
from cogworker.app.web import create_app
from cogworker.app.web.metrics_port import MetricsOnly
from tests.app.helpers import Workers, wait_for_processes
from tests.app.jobs import AlwaysFails, Count, NoRetryFalse, RecordHeavy
from tests.conftest import UNREACHABLE_REDIS_URL
from tests.support.processes import wait_until
from tests.support.redis_server import free_port
from tests.web.helpers import Web, serving

#: (metric name, labels as sorted pairs) -> value
Scrape = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scraped(text: str) -> Scrape:
    """Every sample of a scrape, parsed as Prometheus parses it."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _drained(raw: redis.Redis, processed: int) -> bool:
    return raw.get(keys.stat("default", "processed")) == str(processed).encode() and not raw.llen(
        keys.queue("default")
    )


def test_metrics_after_a_drain_are_exact(
    web: Web, raw: redis.Redis, workers: Workers, enqueuer: cogworker.Client
) -> None:
    """7 successes, 3 straight to dead and 2 to retry on `default`, 4 left on an unserved
    queue, 1 scheduled: every figure is the one Redis holds."""
    for number in range(7):
        enqueuer.enqueue(Count, number)
    for number in range(3):
        enqueuer.enqueue(NoRetryFalse, number)
    for number in range(2):
        enqueuer.enqueue(AlwaysFails, number)
    for number in range(4):
        enqueuer.enqueue(RecordHeavy, number)
    enqueuer.enqueue_in(3600, Count, 99)
    worker = workers.start(concurrency=5, queues=["default"])
    (identity,) = wait_for_processes(raw, 1, worker)
    wait_until(lambda: _drained(raw, 12), 30.0, message=worker.log_tail)
    wait_until(
        lambda: raw.zcard(keys.retry("default")) == 2 and not raw.hlen(keys.workers(identity))
    )
    oldest_heavy = json.loads(raw.lindex(keys.queue("heavy"), -1))["enqueued_at"]
    before = raw.time()[0] - 1

    response = web.get("/metrics")

    after = raw.time()[0] + 1
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = scraped(response.text)
    process = (("hostname", raw.hget(keys.process(identity), "hostname").decode()),
               ("identity", identity))  # fmt: skip
    latency = samples.pop(("cogworker_queue_latency_seconds", (("queue", "heavy"),)))
    assert before - oldest_heavy <= latency <= after - oldest_heavy
    assert _class_series(samples) == {
        "tests.app.jobs.Count": (7, 0),
        "tests.app.jobs.NoRetryFalse": (3, 3),
        "tests.app.jobs.AlwaysFails": (2, 2),
    }
    assert samples == {
        ("cogworker_processed_total", ()): 12,
        ("cogworker_failed_total", ()): 5,
        ("cogworker_scheduled_jobs", ()): 1,
        ("cogworker_retry_jobs", ()): 2,
        ("cogworker_dead_jobs", ()): 3,
        ("cogworker_processes", ()): 1,
        ("cogworker_queue_jobs", (("queue", "default"),)): 0,
        ("cogworker_queue_jobs", (("queue", "heavy"),)): 4,
        ("cogworker_queue_latency_seconds", (("queue", "default"),)): 0,
        ("cogworker_queue_paused", (("queue", "default"),)): 0,
        ("cogworker_queue_paused", (("queue", "heavy"),)): 0,
        ("cogworker_process_busy", process): 0,
        ("cogworker_process_concurrency", process): 5,
        ("cogworker_unreadable_keys", ()): 0,
        ("cogworker_job_classes_left_out", ()): 0,
    }


def _class_series(samples: Scrape) -> dict[str, tuple[float, float]]:
    """Take the per-class families out of `samples`: each class's runs and failures, once
    its histogram is checked to be whole (cumulative, `+Inf` and `_count` at the runs, a
    sum for the time of a run or more)."""
    classes: dict[str, tuple[float, float]] = {}
    for (name, labels), runs in list(samples.items()):
        if name != "cogworker_job_runs_total":
            continue
        by_class = dict(labels)["class"]
        failures = samples.pop(("cogworker_job_failures_total", labels))
        del samples[(name, labels)]
        seconds = "cogworker_job_execution_seconds"
        assert samples.pop((f"{seconds}_count", labels)) == runs
        assert samples.pop((f"{seconds}_sum", labels)) > 0
        buckets = sorted(
            (float(dict(bucket_labels)["le"]), samples.pop((bucket_name, bucket_labels)))
            for bucket_name, bucket_labels in list(samples)
            if bucket_name == f"{seconds}_bucket" and dict(bucket_labels)["class"] == by_class
        )
        counts = [count for _, count in buckets]
        assert counts == sorted(counts)
        assert buckets[-1] == (float("inf"), runs)
        classes[by_class] = (runs, failures)
    return classes


def test_a_key_of_the_wrong_type_leaves_its_sample_out_and_is_counted(
    web: Web, raw: redis.Redis
) -> None:
    """A counter holding text, a queue key holding a string and a class's metrics holding a
    negative time: the rest of the scrape stands."""
    raw.set(keys.stat(parts.MIGRATED, "processed"), "abc")
    raw.sadd(keys.QUEUES, "broken", "fine")
    raw.set(keys.queue("broken"), "not a list")
    raw.lpush(keys.queue("fine"), json.dumps({"class": "x.Y", "queue": "fine", "jid": "j1",
                                               "args": [], "created_at": 1.0}))  # fmt: skip
    raw.sadd(keys.PARTS, "fine")
    raw.zadd(keys.metrics_classes("fine"), {"x.Y": 1.0})
    raw.hset(keys.metrics_total("fine", "x.Y"), mapping={"0": "1", "t": "-5"})
    samples = scraped(web.get("/metrics").text)
    assert ("cogworker_processed_total", ()) not in samples
    assert ("cogworker_queue_jobs", (("queue", "broken"),)) not in samples
    assert ("cogworker_job_runs_total", (("class", "x.Y"),)) not in samples
    assert samples[("cogworker_queue_jobs", (("queue", "fine"),))] == 1
    assert samples[("cogworker_unreadable_keys", ())] == 3


def test_odd_queue_names_are_escaped_not_forged(web: Web, raw: redis.Redis) -> None:
    """A queue name holding quotes, a backslash and a newline comes back as itself."""
    name = 'a"b\\c\nd} cogworker_dead_jobs 999'
    raw.sadd(keys.QUEUES, name)
    samples = scraped(web.get("/metrics").text)
    assert samples[("cogworker_queue_jobs", (("queue", name),))] == 0
    assert samples[("cogworker_dead_jobs", ())] == 0


def test_a_paused_queue_reads_1_and_a_running_one_0(
    web: Web, raw: redis.Redis, config: cogworker.Config
) -> None:
    """`cogworker_queue_paused` follows `Client.pause` and `resume`."""
    raw.sadd(keys.QUEUES, "mail", "reports")
    client = cogworker.Client(config)
    client.pause("reports")
    samples = scraped(web.get("/metrics").text)
    assert samples[("cogworker_queue_paused", (("queue", "reports"),))] == 1
    assert samples[("cogworker_queue_paused", (("queue", "mail"),))] == 0
    client.resume("reports")
    client.close()
    samples = scraped(web.get("/metrics").text)
    assert samples[("cogworker_queue_paused", (("queue", "reports"),))] == 0


def test_metrics_ask_for_the_dashboard_auth(config: cogworker.Config) -> None:
    """With auth configured, a scrape without credentials is a 401 and one with them a 200."""
    app = create_app(config, auth="prom:a-long-password")
    good = base64.b64encode(b"prom:a-long-password").decode()
    with TestClient(app) as client:
        assert client.get("/metrics").status_code == 401
        answered = client.get("/metrics", headers={"authorization": f"Basic {good}"})
    assert answered.status_code == 200
    assert "cogworker_processed_total 0" in answered.text


def test_metrics_answer_only_to_allowed_hosts(config: cogworker.Config) -> None:
    """A dashboard naming its hosts refuses a scrape under another name (DNS rebinding)."""
    app = create_app(config, allowed_hosts={"127.0.0.1"})
    with TestClient(app, base_url="http://evil.example") as client:
        assert client.get("/metrics").status_code == 400
    with TestClient(app, base_url="http://127.0.0.1:7433") as client:
        assert client.get("/metrics").status_code == 200


def test_serve_answers_metrics_alone_without_auth_on_its_metrics_port(
    redis_url: str, raw: redis.Redis, tmp_path: Path
) -> None:
    """`cogworker serve --auth ... --metrics-port N`: 127.0.0.1:N answers GET /metrics with no
    credentials, nothing else, and only to localhost names; the dashboard keeps its auth."""
    raw.set(keys.stat(parts.MIGRATED, "failed"), 3)
    metrics_port = free_port()
    args = ("--redis-url", redis_url, "--metrics-port", str(metrics_port))
    with serving(tmp_path, *args, env={"COGWORKER_DASHBOARD_AUTH": "ops:pw"}) as base:
        metrics = f"http://127.0.0.1:{metrics_port}"
        answered = httpx.get(metrics + "/metrics", timeout=5)
        refused = {
            "page": httpx.get(metrics + "/", timeout=5).status_code,
            "post": httpx.post(metrics + "/metrics", timeout=5).status_code,
            "rebound": httpx.get(metrics + "/metrics", headers={"Host": "evil.example"},
                                 timeout=5).status_code,
            "dashboard": httpx.get(base + "/metrics", timeout=5).status_code,
        }  # fmt: skip
        on_localhost = httpx.get(f"http://localhost:{metrics_port}/metrics", timeout=5)
    assert answered.status_code == 200
    assert answered.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert scraped(answered.text)[("cogworker_failed_total", ())] == 3
    assert refused == {"page": 404, "post": 404, "rebound": 400, "dashboard": 401}
    assert on_localhost.status_code == 200


def test_serve_refuses_the_dashboard_port_as_metrics_port(redis_url: str) -> None:
    """One port can't serve both: a usage error naming the option."""
    args = ["serve", "--redis-url", redis_url, "--port", "7433", "--metrics-port", "7433"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "Invalid value for '--metrics-port': give the metrics their own port" in result.output


def test_a_scrape_while_redis_is_away_is_a_503() -> None:
    """Redis not answering: the dashboard's /metrics and the metrics port both say 503."""
    config = cogworker.Config(redis_url=UNREACHABLE_REDIS_URL)
    unreachable = redis.Redis.from_url(UNREACHABLE_REDIS_URL, socket_timeout=2.0)
    store = DashboardStore.on(unreachable, config.retention)
    with TestClient(create_app(config, client=unreachable)) as client:
        assert client.get("/metrics").status_code == 503
    status, body = asyncio.run(_get(MetricsOnly(store, config.metrics_max_classes), "/metrics"))
    assert status == 503
    assert body == b"Redis did not answer: ConnectionError"


async def _get(app: MetricsOnly, path: str) -> tuple[int, bytes]:
    """GET `path` of an ASGI app, as a server on 127.0.0.1 would: its status and body."""
    scope: Any = {
        "type": "http", "method": "GET", "path": path,
        "headers": [(b"host", b"127.0.0.1:9433")], "server": ("127.0.0.1", 9433),
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], sent[1]["body"]
