"""Everything a page lists can be acted on: queues whose names hold control characters or run
past 500 characters open and clear; entries scored ±inf are retried, deleted and bulk-acted on."""

from __future__ import annotations

import html
import json
import re

import redis

from cogworker.adapters import redis_keys as keys
from tests.support.sets import add_to_set
from tests.web.helpers import Web, run_bulk, zset_jids

#: Names written before the rule (or by hand) that a link can't carry as they are.
ODD_NAMES = ["tab\there", "line\nbreak", "q" * 600, " padded", "#looks-like-a-digest"]


def _job(jid: str, queue: str = "web") -> str:
    return json.dumps({"class": "tests.web.jobs.Done", "queue": queue, "jid": jid, "args": [],
                       "retry": True, "created_at": 1.7e9, "retry_count": 1})  # fmt: skip


def _hrefs(page: str, path: str) -> list[str]:
    return [html.unescape(href) for href in re.findall(rf'href="({path}\?[^"]*)"', page)]


def test_every_listed_queue_opens_and_clears(web: Web, raw: redis.Redis) -> None:
    """Each odd queue the Queues page lists: its link shows its job, its Clear form deletes it
    and unregisters the queue."""
    for number, name in enumerate(ODD_NAMES):
        raw.sadd(keys.QUEUES, name)
        raw.lpush(keys.queue(name), _job(f"odd{number}", queue=name))
    links = _hrefs(web.get("/queues").text, "/queue")
    assert len(links) == len(ODD_NAMES)
    for link in links:
        opened = web.get(link)
        assert opened.status_code == 200, (link, opened.text[:300])
        assert re.search(r">odd\d<", opened.text), link
    for link in _hrefs(web.get("/queues").text, "/queue/clear"):
        confirm = web.get(link).text
        (ref,) = re.findall(r'name="name" value="([^"]*)"', confirm)
        assert "Deleted 1 job." in web.act("/queue/clear", {"name": html.unescape(ref)}).text
    assert raw.smembers(keys.QUEUES) == set()
    assert raw.keys(keys.queue("*")) == []


def test_a_digest_no_queue_has_is_a_404(web: Web) -> None:
    """A `#digest` naming no registered queue is not found, not an empty queue."""
    assert web.get("/queue", params={"name": "#0123456789abcdef0123"}).status_code == 404


def test_entries_scored_inf_are_retried_deleted_and_bulk_acted_on(
    web: Web, raw: redis.Redis
) -> None:
    """Retries parked at +inf and -inf: Retry now and Delete act on them by their row's
    token, and "Delete all" goes through them all."""
    add_to_set(raw, keys.retry("web"), {_job(jid): score for jid, score in
                          (("up1", float("inf")), ("up2", float("inf")), ("down", float("-inf")),
                           ("mid", 5.0))})  # fmt: skip
    page = web.get("/retries").text
    tokens = {
        jid: html.unescape(token)
        for token, jid in re.findall(r'name="row" value="retry:([^"]*~(\w+))"', page)
    }
    assert set(tokens) == {"up1", "up2", "down", "mid"}
    retried = web.act("/retries/act", {"row": "retry:" + tokens["up1"]})
    assert "Retried 1 job." in retried.text
    assert [json.loads(raw_job)["jid"] for raw_job in raw.lrange(keys.queue("web"), 0, -1)] == [
        "up1"
    ]
    deleted = web.act("/retries/act", {"row": "delete:" + tokens["down"]})
    assert "Deleted 1 job." in deleted.text

    assert run_bulk(web, "retries", {"action": "delete"})["done"] == 2
    assert zset_jids(raw, keys.retry("web")) == []


def test_a_queue_name_that_is_not_utf8_is_listed_with_its_problem(
    web: Web, raw: redis.Redis
) -> None:
    """A registered name of raw bytes: Queues, Overview and /api/stats answer, and say so."""
    raw.sadd(keys.QUEUES, b"\xffraw", "web")
    queues = web.get("/queues")
    assert queues.status_code == 200
    assert "its name isn&#39;t UTF-8 text" in queues.text
    assert web.get("/").status_code == 200
    loads = {load["name"]: load for load in web.get("/api/stats").json()["queues"]}
    assert loads["\\xffraw"]["size"] is None
