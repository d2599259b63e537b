"""What "Running now" and the job page say about running work: elapsed time against the
job's time limit, its expiry, a time-limit failure on the timeline.

The heartbeat records here are written as a worker's heartbeat writes them (with the
`timeout` field a time-limited job's record carries), so each case can be set exactly.
"""

from __future__ import annotations

import json
import re

import redis

import cogworker
from tests.web import jobs
from tests.web.helpers import Web


def _now(raw: redis.Redis) -> float:
    seconds, micros = raw.time()
    return seconds + micros / 1_000_000


def _running(raw: redis.Redis, identity: str, beat: float, **work: object) -> None:
    """A registered process whose last beat was at `beat`, running one job."""
    raw.sadd("cogworker:processes", identity)
    raw.hset(f"cogworker:process:{identity}", mapping={"beat": beat, "concurrency": 1})
    record = {"jid": "spinning01", "class": "app.Spin", "queue": "web", "args": [], **work}
    raw.hset(f"cogworker:workers:{identity}", "thread-1", json.dumps(record))


def test_running_now_shows_elapsed_time_against_the_limit(web: Web, raw: redis.Redis) -> None:
    """45 s into a 30 s limit reads "45 s of 30 s", flagged past its limit, on both pages."""
    now = _now(raw)
    _running(raw, "host:1", now, run_at=now - 45, timeout=30)
    page = web.get("/workers").text
    assert re.search(r"4[5-9] s of 30 s", page)
    assert "past its time limit" in page
    assert "process not responding" not in page
    job = web.get("/job?jid=spinning01").text
    assert re.search(r"<dt>Time limit</dt><dd>30 s</dd>", job)
    assert re.search(r"Running for</dt><dd><span class=\"cw-elapsed\">4[5-9] s of 30 s", job)


def test_without_a_limit_only_the_elapsed_time_shows(web: Web, raw: redis.Redis) -> None:
    """A record without a (usable) `timeout` has no limit bar; one without `run_at`, no time."""
    now = _now(raw)
    _running(raw, "host:1", now, run_at=now - 5, timeout="soon")
    page = web.get("/workers").text
    assert re.search(r'class="cw-elapsed">[5-9](\.\d)? s</span>', page)
    assert "cw-limit" not in page
    _running(raw, "host:1", now)
    assert 'class="cw-elapsed">n/a</span>' in web.get("/workers").text


def test_a_stale_process_s_work_is_marked_not_responding(web: Web, raw: redis.Redis) -> None:
    """A process that stopped beating a minute ago: its job is not running any more."""
    now = _now(raw)
    _running(raw, "host:1", now - 60, run_at=now - 90)
    marked = "process not responding — jobs will be recovered"
    assert marked in web.get("/workers").text
    assert marked in web.get("/job?jid=spinning01").text


def test_job_page_shows_expiry_and_a_timed_out_attempt(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The payload's `expires_at` in UTC; an attempt failed by its time limit reads "timed out"."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done, expires_at=4_102_444_800.0))
    attempt = {"attempt": 1, "failed_at": 1.7e9, "error_class": "cogworker.JobTimeoutError",
               "error_message": "ran past 30 s", "outcome": "retrying"}  # fmt: skip
    raw.lpush(f"cogworker:job_attempts:{jid}", json.dumps(attempt))
    page = web.get(f"/job?jid={jid}").text
    assert "(2100-01-01 00:00:00 UTC)" in page
    assert "Attempt 1 · timed out" in page
    never = str(enqueuer.enqueue_in(3600, jobs.Done))
    assert "<dt>Expires</dt><dd>never</dd>" in web.get(f"/job?jid={never}").text
