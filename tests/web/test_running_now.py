"""What "Running now" and the job page say about running work: elapsed time against the
job's time limit, its expiry, a time-limit failure on the timeline.

Most heartbeat records here are written as a worker's heartbeat writes them (with the
`timeout` field a time-limited job's record carries), so each case can be set exactly;
a killed worker's work is a real one's.
"""

from __future__ import annotations

import json
import re
import time

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, wait_for_processes
from tests.support.processes import wait_until
from tests.web import jobs
from tests.web.helpers import Web
from tests.web.scenario import WEB_APP

NOT_RESPONDING = "process not responding — jobs will be recovered"


def _now(raw: redis.Redis) -> float:
    seconds, micros = raw.time()
    return seconds + micros / 1_000_000


def _running(raw: redis.Redis, identity: str, beat: float, **work: object) -> None:
    """A registered process whose last beat was at `beat`, running one job."""
    raw.sadd("cogworker:processes", identity)
    raw.hset(keys.process(identity), mapping={"beat": beat, "concurrency": 1})
    record = {"jid": "spinning01", "class": "app.Spin", "queue": "web", "args": [], **work}
    raw.hset(keys.workers(identity), "thread-1", json.dumps(record))


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
    assert "<dt>Expires</dt>" not in job  # expiry is for jobs that haven't started
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
    assert NOT_RESPONDING in web.get("/workers").text
    assert NOT_RESPONDING in web.get("/job?jid=spinning01").text


def test_a_killed_worker_s_jobs_are_marked_not_responding(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """kill -9 a worker mid-job: its row stays (until recovery) and is marked, not shown as
    running; while it beat, it wasn't."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    jid = str(enqueuer.enqueue(jobs.Holds, "hold"))
    wait_until(lambda: raw.sismember("holding", jid) == 1, message=worker.log_tail)
    wait_until(lambda: jid in web.get("/workers").text, message=worker.log_tail)
    assert NOT_RESPONDING not in web.get("/workers").text
    worker.kill()
    # Marked once the beat is older than the dashboard's stale limit (15 s at the least).
    wait_until(lambda: NOT_RESPONDING in web.get("/workers").text, 40.0, interval=0.5)
    assert jid in web.get("/workers").text


def test_a_running_job_s_page_shows_when_it_was_created_and_enqueued(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A job running on a real worker: its page shows the payload's times and retry budget,
    not the empty record's (which read 1970 and a budget of none)."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    jid = str(enqueuer.enqueue(jobs.Holds, "hold"))
    wait_until(lambda: raw.sismember("holding", jid) == 1, message=worker.log_tail)
    wait_until(lambda: ">Running</span>" in web.get(f"/job?jid={jid}").text, message="beat")
    page = web.get(f"/job?jid={jid}").text
    raw.lpush("release", "1")
    created = time.strftime("%Y-%m-%d", time.gmtime(_now(raw)))
    assert re.search(rf"<dt>Created</dt><dd>.*{created} \d\d:\d\d:\d\d UTC", page), page
    assert re.search(rf"<dt>Enqueued</dt><dd>.*{created} \d\d:\d\d:\d\d UTC", page), page
    assert "1970-01-01" not in page  # the empty record's date (raw timestamps may hold "1970")
    assert "<dt>Retries allowed</dt><dd>25 (default)</dd>" in page


def test_job_page_shows_expiry_and_a_timed_out_attempt(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The payload's `expires_at` in UTC; an attempt failed by its time limit reads "timed out"."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done, expires_at=4_102_444_800.0))
    attempt = {"attempt": 1, "failed_at": 1.7e9, "error_class": "cogworker.JobTimeoutError",
               "error_message": "ran past 30 s", "outcome": "retrying"}  # fmt: skip
    # As a settlement writes it, its queue a part, but without its jid index: found by the probe.
    raw.sadd("cogworker:parts", "web")
    raw.lpush(f"cogworker:{{q:web}}:attempts:{jid}", json.dumps(attempt))
    page = web.get(f"/job?jid={jid}").text
    assert '<span class="cw-abs">2100-01-01 00:00:00 UTC</span>' in page
    assert "Attempt 1 · timed out" in page
    never = str(enqueuer.enqueue_in(3600, jobs.Done))
    assert "<dt>Expires</dt><dd>never</dd>" in web.get(f"/job?jid={never}").text
