"""An empty Redis: every page says what to do next, and offers no action over nothing."""

from __future__ import annotations

import cogworker
from tests.web import jobs
from tests.web.helpers import Web


def test_empty_pages_say_what_to_do(web: Web) -> None:
    """Workers and Overview point to `cogworker work APP`; the sets say what puts jobs there."""
    assert "Start one with <code>cogworker work APP</code>" in web.get("/workers").text
    assert "<code>cogworker work APP</code>" in web.get("/").text
    assert "perform_async" in web.get("/queues").text
    assert "Periodic(cron=" in web.get("/periodic").text
    expected = {
        "/scheduled": "No scheduled jobs. perform_in",
        "/retries": "No jobs waiting to retry.",
        "/dead": "No dead jobs.",
    }
    for path, text in expected.items():
        assert text in web.get(path).text, path


def test_no_bulk_buttons_over_nothing(web: Web, enqueuer: cogworker.Client) -> None:
    """No "… all" on an empty set or with no processes; they come back once there is
    something to act on."""
    assert "Stop all" not in web.get("/workers").text
    for path in ("/scheduled", "/retries", "/dead"):
        html = web.get(path).text
        assert " all…" not in html, path
        assert "selected</button>" not in html, path
    enqueuer.enqueue_in(3600, jobs.Done)
    assert "Delete all…" in web.get("/scheduled").text
