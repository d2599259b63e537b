"""A real Prometheus server scrapes `cogworker serve`'s `/metrics` (with the dashboard's basic
auth) and its query API answers with cogworker's series."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import redis

from cogworker.adapters import parts
from cogworker.adapters import redis_keys as keys
from tests.support.processes import reap, spawn, wait_until
from tests.support.redis_server import free_port
from tests.web.helpers import serving

#: Debian's package (scripts/test.sh installs it).
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
AUTH = ("prom", "scrape-password-1")

SCRAPE_CONFIG = """\
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cogworker
    scrape_interval: 1s
    scrape_timeout: 1s
    metrics_path: {path}
    basic_auth:
      username: {user}
      password: {password}
    static_configs:
      - targets: ["{target}"]
"""


@contextlib.contextmanager
def prometheus(directory: Path, target: str, path: str) -> Iterator[str]:
    """A Prometheus server scraping `target` every second, once ready; its base URL."""
    config = directory / "prometheus.yml"
    config.write_text(SCRAPE_CONFIG.format(path=path, user=AUTH[0], password=AUTH[1],
                                           target=target))  # fmt: skip
    port = free_port()
    log = directory / "prometheus.log"
    process = spawn(
        [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        log_path=log, cwd=directory, env={},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: httpx.get(base + "/-/ready", timeout=1).status_code == 200,
            30.0,
            ignore=(httpx.HTTPError,),
            message=lambda: log.read_text(errors="replace")[-3000:],
        )
        yield base
    finally:
        reap(process)


def query(base: str, promql: str) -> list[dict[str, Any]]:
    """The instant vector a PromQL query answers with."""
    answer = httpx.get(base + "/api/v1/query", params={"query": promql}, timeout=5).json()
    assert answer["status"] == "success", answer
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def test_prometheus_scrapes_cogworker_series(
    tmp_path: Path, raw: redis.Redis, redis_url: str
) -> None:
    """Counters (summed over queues) and per-queue gauges set in Redis come back from
    Prometheus's query API."""
    raw.set(keys.stat(parts.MIGRATED, "processed"), 40)
    raw.set(keys.stat("mail", "processed"), 2)
    raw.set(keys.stat("mail", "failed"), 5)
    raw.sadd(keys.PARTS, "mail")
    raw.sadd(keys.QUEUES, "mail")
    raw.lpush(keys.queue("mail"), *[f'{{"jid": "j{n}"}}' for n in range(3)])
    env = {"COGWORKER_DASHBOARD_AUTH": ":".join(AUTH)}
    serve_args = ("--redis-url", redis_url, "--root-path", "/jobs")
    with serving(tmp_path / "serve", *serve_args, root="/jobs", env=env) as dashboard:
        target = httpx.URL(dashboard)
        with prometheus(tmp_path, f"{target.host}:{target.port}", "/jobs/metrics") as base:
            wait_until(
                lambda: query(base, 'cogworker_processed_total{job="cogworker"} == 42'),
                60.0,
                interval=0.5,
                message=lambda: f"targets: {httpx.get(base + '/api/v1/targets').text[:2000]}",
            )
            (failed,) = query(base, "cogworker_failed_total")
            (mail,) = query(base, "cogworker_queue_jobs")
            (up,) = query(base, 'up{job="cogworker"}')
    assert failed["value"][1] == "5"
    assert mail["metric"]["queue"] == "mail"
    assert mail["value"][1] == "3"
    assert up["value"][1] == "1"
