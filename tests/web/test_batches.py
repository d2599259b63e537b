"""The Batches page: each batch with its members' progress and its callbacks."""

from __future__ import annotations

import redis
from playwright.sync_api import expect

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_store import BatchStore
from cogworker.app.batch_folding import fold_queue
from tests.web import jobs
from tests.web.browser import Tab
from tests.web.helpers import Web


def _batches(enqueuer: cogworker.Client, raw: redis.Redis) -> tuple[str, str]:
    """A batch still open, and a closed one whose members ended (one dead), its on_complete
    pushed; their members' ends written as the settling scripts append them."""
    still_open = enqueuer.batch(on_success=jobs.Done)
    still_open.enqueue(jobs.Done, "waits")
    with enqueuer.batch(on_success=jobs.Done, on_complete=jobs.Done, args=["x"]) as ended:
        jids = ended.enqueue_many(jobs.Done, [[1], [2], [3]])
    for jid, final in zip(jids, ("ack", "ack", "dead"), strict=True):
        raw.rpush(keys.batch_events("web"), f"{ended.bid} {jid} {final}")
    fold_queue(BatchStore(raw), "web", lambda: 0.0)
    return still_open.bid, ended.bid


def test_the_page_lists_each_batch_with_its_progress_and_callbacks(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Open and complete batches: members, pending, succeeded, failed by outcome, and which
    callbacks fired; an expired batch leaves the list."""
    assert "No batches." in web.get("/batches").text
    still_open, ended = _batches(enqueuer, raw)
    page = web.get("/batches").text
    for shown in (still_open, ended, "open", "complete", "dead 1", "on_complete: fired",
                  "on_success: <span class=\"muted\">not yet</span>"):  # fmt: skip
        assert shown in page
    raw.delete(keys.batch(still_open))
    assert still_open not in web.get("/batches").text
    assert raw.zscore(keys.BATCHES, still_open) is None


def test_a_person_sees_the_batches(tab: Tab, enqueuer: cogworker.Client, raw: redis.Redis) -> None:
    """In the browser: the Batches tab lists the batches (screenshot saved)."""
    _still_open, ended = _batches(enqueuer, raw)
    page = tab.go("/batches")
    expect(page.get_by_role("link", name="Batches")).to_have_attribute("aria-current", "page")
    expect(page.get_by_role("cell", name=ended)).to_be_visible()
    tab.shot("batches")
