"""The job page shows a job's kept result: the value it returned, or how it ended; found by
its jid index, or without it; escaped like everything else."""

from __future__ import annotations

import html

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.domain import results
from tests.web.helpers import Web


def test_the_job_page_shows_a_kept_value_or_how_the_job_ended(web: Web, raw: redis.Redis) -> None:
    """A success shows its value (markup escaped; a long one cut short); a dead job its
    outcome and error; a job keeping nothing has no Result section."""
    raw.set(keys.jid_index("kept01"), "mail")
    raw.rpush(keys.result("mail", "kept01"), results.success_record('{"rows":42,"s":"<b>"}'))
    raw.sadd(keys.QUEUES, "mail")  # the second is found without its index
    raw.rpush(keys.result("mail", "died01"), results.ended_record("dead", "ValueError", "no luck"))

    kept = web.get("/job", params={"jid": "kept01"})
    assert kept.status_code == 200
    assert "Result" in kept.text
    assert '"rows": 42' in html.unescape(kept.text)
    assert "&lt;b&gt;" in kept.text
    died = web.get("/job", params={"jid": "died01"}).text
    assert "Ended <strong>dead</strong>" in died
    assert "ValueError" in died
    assert "no luck" in died
    assert 'id="cw-result-title"' not in web.get("/job", params={"jid": "plain01"}).text
    raw.rpush(keys.result("mail", "long01"), results.success_record('"' + "x" * 5000 + '"'))
    long = web.get("/job", params={"jid": "long01"}).text
    assert "characters, the first" in long
    assert "x" * 5000 not in long
