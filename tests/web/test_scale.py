"""100,000 dead, 100,000 retries, 100,000 queued: no dashboard request makes Redis run one
command for more than 5 ms, and pages cost a bounded number of commands, whatever the sizes
(the measurement is bench/dashboard_scale.py's; its table goes to test-artifacts)."""

from __future__ import annotations

from pathlib import Path

import redis
from bench import dashboard_scale as scale
from litestar.testing import TestClient

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app, paging

SIZE = 100_000
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_no_request_blocks_redis_over_5_ms_at_100_000_entries(
    config: cogworker.Config, raw: redis.Redis
) -> None:
    """Every page and API, a job page by a link from each list and "Go to jid" (found and
    not found): the longest Redis command each causes stays under 5 ms (its own execution
    time, from the SLOWLOG); a page by a link costs a handful of commands."""
    loaded = scale.load(raw, SIZE)
    scale.log_every_command(raw)
    with TestClient(create_app(config)) as http:
        scale.warm_up(http)
        rows = {row.page: row for row in scale.pages(http, raw)}
    report = f"{SIZE:,} of each, loaded in {loaded:.1f} s\n\n{scale.table(list(rows.values()))}"
    print("\n" + report)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "dashboard-scale.md").write_text(report + "\n")
    assert {page: row.status for page, row in rows.items() if row.status != 200} == {}
    slow = {page: (row.longest, row.longest_ms) for page, row in rows.items()
            if row.longest_ms > scale.LIMIT_MS}  # fmt: skip
    assert slow == {}
    assert "100,000 in dead" in rows["Dead"].text
    assert ">dead049999</a>" in rows["Dead, by cursor"].text
    assert "looked at" in rows["Dead, filtered"].text
    for page in ("Job page via a Dead link", "Go to jid (dead, halfway)"):
        assert ">Dead</span>" in rows[page].text, page
    assert ">Retrying</span>" in rows["Go to jid (retry, halfway)"].text
    # Found through the sets' jid index: its look-ups, then the page it redirects to.
    found = ("Go to jid (dead, halfway)", "Go to jid (retry, halfway)")
    assert {page: rows[page].commands for page in found if rows[page].commands > 24} == {}
    assert ">Retrying</span>" in rows["Job page via a Retries link"].text
    assert ">Enqueued</span>" in rows["Job page via a queue link"].text
    assert "Not found" in rows["Go to jid (nowhere)"].text
    bounded = ("Dead", "Dead, by cursor", "Dead, bulk confirmation", "Job page via a Dead link")
    assert {page: rows[page].commands for page in bounded if rows[page].commands > 12} == {}
    assert rows["Dead, filtered"].commands <= 12 + paging.SCAN_LIMIT // 250
    assert raw.zcard(keys.dead("default")) == SIZE  # looking changed nothing
