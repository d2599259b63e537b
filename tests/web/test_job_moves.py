"""In a browser: a job page opened from a list polls where its link said the job is, shows
when the job has moved on, and the search it offers finds where it went."""

from __future__ import annotations

import json

import redis
from playwright.sync_api import expect

from cogworker.adapters import redis_keys as keys
from tests.web.browser import Tab

ENTRY = json.dumps({"class": "app.Send", "queue": "default", "jid": "mover01", "args": [1],
                    "retry": True, "created_at": 1.7e9, "retry_count": 1,
                    "error_class": "Boom", "error_message": "boom"})  # fmt: skip


def test_a_job_page_shows_its_job_moved_and_finds_it_again(tab: Tab, raw: redis.Redis) -> None:
    """Dead → its page (by the link's place); the job goes to Retries meanwhile: a poll says
    it moved, and "Search for it" lands on its page in Retries."""
    raw.zadd(keys.DEAD, {ENTRY: 1.7e9})
    page = tab.go("/dead")
    page.get_by_role("link", name="mover01").click()
    where = page.locator(".cw-job-where .tag").first
    expect(where).to_have_text("Dead")
    assert "in=dead" in page.url
    raw.delete(keys.DEAD)
    raw.zadd(keys.RETRY, {ENTRY: 4.0e9})
    expect(page.locator(".cw-moved")).to_be_visible(timeout=20_000)  # the next poll
    tab.shot("job-moved")
    page.get_by_role("link", name="Search for it").click()
    expect(where).to_have_text("Retrying")
    assert "in=retries" in page.url
