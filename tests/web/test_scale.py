"""100,000 dead jobs: pages cost a bounded number of Redis commands, whatever the set's size."""

from __future__ import annotations

import json
import time
from pathlib import Path

import redis

from cogworker.app.web import paging
from tests.web.helpers import Web

SIZE = 100_000
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _seed_dead(raw: redis.Redis, count: int) -> None:
    pipe = raw.pipeline(transaction=False)
    for start in range(0, count, 10_000):
        pipe.zadd(
            "cogworker:dead",
            {
                json.dumps({
                    "class": f"app.jobs.Class{n % 7}", "queue": "default", "jid": f"jid{n:06d}",
                    "args": [n, "x" * 40], "retry": True, "created_at": 1.7e9,
                    "error_class": "RuntimeError", "error_message": f"boom {n}",
                    "failed_at": 1.7e9 + n, "retry_count": 25,
                }): 1.7e9 + n
                for n in range(start, min(start + 10_000, count))
            },
        )  # fmt: skip
    pipe.execute()


def _commands(raw: redis.Redis) -> int:
    stats = raw.info("commandstats")
    return sum(int(value["calls"]) for value in stats.values())


def _measure(web: Web, raw: redis.Redis, path: str) -> tuple[int, float, str]:
    raw.config_resetstat()
    before = _commands(raw)
    started = time.perf_counter()
    response = web.get(path)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.text[:300]
    # The INFO call that reads the stats counts itself once.
    return _commands(raw) - before - 1, elapsed, response.text


def test_a_page_of_a_huge_dead_set_costs_a_bounded_number_of_commands(
    web: Web, raw: redis.Redis
) -> None:
    """First page, a deep page by cursor, a filtered page and the bulk confirmation stay bounded."""
    _seed_dead(raw, SIZE)
    web.get("/dead")  # the CSRF cookie and script loads are not what is measured
    lines = []
    first_count, first_time, html = _measure(web, raw, "/dead")
    assert "jid099999" in html
    assert "100,000 in dead" in html
    deep_count, deep_time, deep = _measure(web, raw, f"/dead?after={1.7e9 + 50_000!r}~jid050000")
    assert ">jid049999</a>" in deep
    assert ">jid050000</a>" not in deep
    filtered_count, filtered_time, found = _measure(web, raw, "/dead?error=boom%209999")
    assert "jid099990" in found
    assert "looked at" in found
    bulk_count, bulk_time, _ = _measure(web, raw, "/dead/bulk?action=delete&class=Class3")
    job_count, job_time, job = _measure(web, raw, "/job?jid=jid000001")
    assert ">Dead<" in job
    for name, count, elapsed in (
        ("first page", first_count, first_time),
        ("page by cursor", deep_count, deep_time),
        (
            f"filtered page (<= {paging.SCAN_LIMIT} entries looked at)",
            filtered_count,
            filtered_time,
        ),
        ("bulk confirmation (the set's size)", bulk_count, bulk_time),
        ("job page (a ZSCAN search)", job_count, job_time),
    ):
        lines.append(f"{name}: {count} Redis commands, {elapsed * 1000:.0f} ms")
    report = f"dashboard over {SIZE:,} dead jobs\n" + "\n".join(lines)
    print("\n" + report)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "dashboard-bench.txt").write_text(report + "\n")
    assert first_count <= 12
    assert deep_count <= 12
    assert filtered_count <= 12 + paging.SCAN_LIMIT // 250
    assert bulk_count <= 12
    assert job_count <= 40
    assert raw.zcard("cogworker:dead") == SIZE  # looking changed nothing
