"""axe-core in chromium on every dashboard page, with a worker's data: no serious or critical
violation (contrast, names...) and no landmark finding, in light and dark mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from playwright.sync_api import Page, expect

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers
from tests.web.browser import Tab
from tests.web.helpers import schedule_entry
from tests.web.scenario import PAGES, Seeded, seed

#: axe-core as `npm ci` in tests/web/axe installs it (scripts/test.sh does).
AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts that fail a page; and landmarks' findings whatever their impact (a screen
#: reader's user moves by them).
GRAVE = ("serious", "critical")
_VIOLATIONS = """async (grave) => {
  const found = await axe.run(document, {resultTypes: ["violations"]});
  return found.violations
    .filter((violation) => grave.includes(violation.impact) || violation.id.startsWith("landmark"))
    .map((violation) => violation.id + ": " + violation.nodes.slice(0, 3)
      .map((node) => node.target.join(" ") + " (" + node.failureSummary + ")").join("; "));
}"""


def _pages(seeded: Seeded) -> dict[str, str]:
    """Every page, and a job's and a history's page of the seeded data."""
    return {
        **PAGES,
        "job-dead": f"/job?jid={seeded.dead}",
        "job-running": f"/job?jid={seeded.running}",
        "history": f"/history?jid={seeded.dead}",
        "job-metrics-class": "/job-metrics/class?name=tests.web.jobs.Done",
    }


def _seeded(workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis) -> Seeded:
    seeded = seed(workers, enqueuer, raw)
    raw.hset(keys.PERIODIC_SCHEDULE, "nightly-report", schedule_entry("nightly-report"))
    return seeded


def violations(page: Page) -> list[str]:
    """The serious and critical axe violations of the page as it is now."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        assert AXE.exists(), f"no {AXE}: run `npm ci --prefix tests/web/axe` (test.sh does)"
        page.evaluate(AXE.read_text())
    found: list[str] = page.evaluate(_VIOLATIONS, list(GRAVE))
    return found


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_no_page_has_a_serious_accessibility_violation(
    request: pytest.FixtureRequest,
    mode: str,
    workers: Workers,
    enqueuer: cogworker.Client,
    raw: redis.Redis,
) -> None:
    """Every page, with a worker's data in every place, passes axe-core's checks but for
    minor and moderate findings (other than landmarks')."""
    tab: Tab = request.getfixturevalue("tab" if mode == "light" else "dark_tab")
    seeded = _seeded(workers, enqueuer, raw)
    found: dict[str, Any] = {}
    for name, path in _pages(seeded).items():
        page = tab.go(path)
        expect(page.locator("h1")).to_be_visible()
        if violations(page):
            found[name] = violations(page)
    assert found == {}, json.dumps(found, indent=1)
