"""The Periodic page's Remove: a confirmed, CSRF-guarded form that takes an entry off the
schedule (as `cogworker periodic remove` does); none in read-only mode."""

from __future__ import annotations

import redis
from litestar.testing import TestClient

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app
from tests.web.helpers import Web, schedule_entry

SCHEDULE = keys.PERIODIC_SCHEDULE


def test_remove_takes_an_entry_off_the_schedule(web: Web, raw: redis.Redis) -> None:
    """Each row, readable or not, has a Remove button asking for a confirmation; removing
    says so and leaves the other entries; removing it again says it was already gone."""
    raw.hset(SCHEDULE, mapping={"report": schedule_entry("report"), "broken": b"{not json"})
    page = web.get("/periodic").text
    assert page.count('action="/periodic/remove"') == 2
    assert 'data-confirm="Remove the periodic job report from the schedule?' in page

    assert "Removed 1 periodic job." in web.act("/periodic/remove", {"name": "broken"}).text
    assert raw.hkeys(SCHEDULE) == [b"report"]
    again = web.act("/periodic/remove", {"name": "broken"}).text
    assert "Removed 0 periodic jobs. 1 periodic job was already gone." in again


def test_remove_needs_the_csrf_token(web: Web, raw: redis.Redis) -> None:
    """A form posted without the page's token is refused and removes nothing."""
    raw.hset(SCHEDULE, "report", schedule_entry("report"))
    response = web.client.post("/periodic/remove", data={"name": "report"})
    assert response.status_code == 403
    assert raw.hexists(SCHEDULE, "report")


def test_read_only_has_no_remove(config: cogworker.Config, raw: redis.Redis) -> None:
    """A read-only dashboard shows no Remove button and refuses the action."""
    raw.hset(SCHEDULE, "report", schedule_entry("report"))
    with TestClient(create_app(config, read_only=True)) as client:
        web = Web(client)
        assert "/periodic/remove" not in web.get("/periodic").text
        response = web.post("/periodic/remove", {"name": "report"})
        assert response.status_code == 403
    assert raw.hexists(SCHEDULE, "report")
