"""The job page shows a job's kept result: the value it returned, or how it ended; found by
its jid index, or without it; escaped like everything else."""

from __future__ import annotations

import html
import time

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain import results
from cogworker.exceptions import JobResultError
from tests.support.sets import add_to_set
from tests.web.helpers import Web, token_of
from tests.web.jobs import Done, KeptLimitedMember, KeptParked

IDENTITY = "host:1:web"


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


def test_the_job_page_of_a_limited_batch_member_keeping_its_result(
    web: Web, raw: redis.Redis, enqueuer: cogworker.Client
) -> None:
    """Waiting, and once settled (its result, its batch event and its limit place written
    by one script): the page shows the job with its batch, then its value."""
    with enqueuer.batch(on_complete=Done) as batch:
        jid = str(batch.enqueue(KeptLimitedMember))
    waiting = web.get("/job", params={"jid": jid})
    assert waiting.status_code == 200
    assert batch.bid in waiting.text
    entry = raw.lmove(keys.queue("web"), keys.in_progress("web", IDENTITY), "RIGHT", "LEFT")
    assert entry is not None
    place = keys.limit("web", "concurrency", KeptLimitedMember.class_path(), "")
    raw.zadd(place, {jid: 1e12})
    kept = results.Kept(queue="web", record=results.success_record('"done"'), keep=60, index_ttl=60)
    outcome = OutcomeRecord(kind="ack", jid=jid, class_name="x", limit_place=place, result=kept)
    order = SettleOrder(fetched=Fetched(queue="web", raw=entry), outcome=outcome)
    assert SettleStore(raw).settle_many(IDENTITY, [order], time.time()) == [True]
    assert raw.zcard(place) == 0
    assert raw.lrange(keys.batch_events("web"), 0, -1) == [f"{batch.bid} {jid} ack".encode()]
    ended = web.get("/job", params={"jid": jid})
    assert ended.status_code == 200
    assert 'id="cw-result-title"' in ended.text
    assert '"done"' in html.unescape(ended.text)


def _ended(enqueuer: cogworker.Client, jid: str) -> str:
    """How the job ended, as its waiter is told (at once: it ended already)."""
    with pytest.raises(JobResultError) as ended:
        enqueuer.result(jid, timeout=0)
    return f"{ended.value.outcome}: {ended.value.error_message}"


def test_a_job_removed_by_hand_tells_its_waiter_how_it_ended(
    web: Web, raw: redis.Redis, enqueuer: cogworker.Client
) -> None:
    """Deleted from its queue or from Scheduled, or cleared with its queue: discarded;
    killed from Retries: killed. Each in the script that removes it."""
    deleted, cleared = (str(enqueuer.enqueue(KeptParked, n)) for n in range(2))
    later, retrying = (str(enqueuer.enqueue_in(3600, KeptParked, n)) for n in range(2))
    [entry] = [e for e in raw.zrange(keys.schedule("parked"), 0, -1) if retrying.encode() in e]
    add_to_set(raw, keys.retry("parked"), {entry: time.time() + 3600})
    raw.zrem(keys.schedule("parked"), entry)

    assert "Deleted 1 job." in web.act("/queue/delete", {"name": "parked", "key": deleted}).text
    assert "Deleted 1 job." in web.act("/queue/clear", {"name": "parked"}).text
    token = token_of(raw, keys.schedule("parked"), later)
    assert "Deleted 1 job." in web.act("/scheduled/act", {"row": f"delete:{token}"}).text
    token = token_of(raw, keys.retry("parked"), retrying)
    assert "Killed 1 job." in web.act("/retries/act", {"row": f"kill:{token}"}).text

    for jid in (deleted, cleared, later):
        assert _ended(enqueuer, jid) == "discarded: discarded by hand"
    assert _ended(enqueuer, retrying) == "killed: killed by hand"
    assert raw.ttl(keys.result("parked", retrying)) > 0
