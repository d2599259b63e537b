"""The job page and the set pages show the retries a job made and the retries it may make,
not its failure count and a bare True/False."""

from __future__ import annotations

import json
import re

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers
from tests.support.sets import add_to_set
from tests.web.helpers import Web
from tests.web.scenario import seed


def _fields(html: str) -> dict[str, str]:
    """The job page's field list: term -> text."""
    return dict(re.findall(r"<dt>([^<]+)</dt><dd[^>]*>([^<]*)</dd>", html))


def test_a_job_that_failed_once_made_no_retry(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Run by a real worker: a retry=False job dead after its one run made no retry and may
    make none; a retry=3 job waiting for its first retry made none of 3."""
    seeded = seed(workers, enqueuer, raw)
    dead = _fields(web.get("/job", params={"jid": seeded.dead}).text)
    assert (dead["Retries allowed"], dead["Retries made"], dead["Failed attempts"]) == (
        "none", "0", "1",
    )  # fmt: skip
    waiting = _fields(web.get("/job", params={"jid": seeded.retrying}).text)
    assert (waiting["Retries allowed"], waiting["Retries made"]) == ("3", "0")
    killed = _fields(web.get("/job", params={"jid": seeded.killed}).text)
    assert killed["Retries allowed"] == "25 (default)"


def test_a_job_that_used_its_retries_shows_them(web: Web, raw: redis.Redis) -> None:
    """A dead job with retry=3 that failed 4 times made 3 retries, on its page and its row."""
    entry = {
        "class": "app.Sync", "queue": "q", "jid": "spent01", "args": [], "retry": 3,
        "created_at": 1.7e9, "failed_at": 1.7e9, "retry_count": 4, "error_message": "x",
    }  # fmt: skip
    add_to_set(raw, keys.dead("q"), {json.dumps(entry): 1.7e9 + 60})
    fields = _fields(web.get("/job", params={"jid": "spent01"}).text)
    assert (fields["Retries allowed"], fields["Retries made"], fields["Failed attempts"]) == (
        "3", "3", "4",
    )  # fmt: skip
    row = re.search(
        r'<td class="num" title="Failed attempts: 4[^"]*">(\d+)</td>', web.get("/dead").text
    )
    assert row is not None
    assert row.group(1) == "3"
