"""The Periodic page over the schedule the workers keep in Redis, and "enqueue now"."""

from __future__ import annotations

import json

import redis

from cogworker.adapters import redis_keys as keys
from tests.web.helpers import Web, schedule_entry

SCHEDULE = keys.PERIODIC_SCHEDULE


def test_no_schedule_says_none_configured(web: Web) -> None:
    """Without a schedule in Redis the page says so."""
    assert "No periodic jobs configured." in web.get("/periodic").text


def test_the_schedule_is_listed_and_a_run_can_be_enqueued_now(web: Web, raw: redis.Redis) -> None:
    """Cron, class, next and last run are shown; "Enqueue now" puts a run on the job's queue."""
    raw.hset(SCHEDULE, mapping={"report": schedule_entry("report"), "broken": b"{not json"})
    page = web.get("/periodic").text
    for shown in ("*/5 * * * *", "tests.web.jobs.Done", "lastjid01", "can't be read"):
        assert shown in page
    done = web.act("/periodic/enqueue", {"name": "report"})
    assert "Enqueued 1 job." in done.text
    (queued,) = [json.loads(raw_job) for raw_job in raw.lrange(keys.queue("web"), 0, -1)]
    assert (queued["class"], queued["args"]) == ("tests.web.jobs.Done", ["nightly"])
    gone = web.act("/periodic/enqueue", {"name": "nope"})
    assert "1 job was already gone." in gone.text


def test_hostile_schedule_entries_are_escaped(web: Web, raw: redis.Redis) -> None:
    """Names, cron, class and args from the schedule are shown as text."""
    evil = '<script>alert("cw-xss")</script>'
    raw.hset(
        SCHEDULE, evil, schedule_entry(evil, cron=evil, class_name=evil, queue=evil, args=(evil,))
    )
    html = web.get("/periodic").text
    assert "<script>alert(" not in html
    assert "&lt;script&gt;alert(" in html
