"""DNS rebinding, as a browser meets it: a foreign name resolving to 127.0.0.1 gets no data."""

from __future__ import annotations

from pathlib import Path

import cogworker
from tests.web import jobs
from tests.web.browser import chromium
from tests.web.helpers import serving


def test_a_rebound_name_gets_a_400_and_no_job_data(
    redis_url: str, enqueuer: cogworker.Client, tmp_path: Path
) -> None:
    """Chromium resolving evil.example to 127.0.0.1 (its host-resolver rules, as a rebinding
    attacker's DNS would) opens the auth-less dashboard by that name: a 400, no jid on it."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done))
    with serving(tmp_path, "--redis-url", redis_url) as base:
        port = base.rsplit(":", 1)[1]
        for browser in chromium("--host-resolver-rules=MAP evil.example 127.0.0.1"):
            page = browser.new_page()
            rebound = page.goto(f"http://evil.example:{port}/scheduled")
            assert rebound is not None
            assert rebound.status == 400
            assert "doesn't answer to the host name 'evil.example'" in page.content()
            assert jid not in page.content()
            own = page.goto(f"{base}/scheduled")
            assert own is not None
            assert own.status == 200
            assert jid in page.content()
