"""Every action through the test client: the response, the notice, and Redis afterwards."""

from __future__ import annotations

import html as html_lib
import json
import re

import redis
from litestar.testing import TestClient

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app
from tests.app.helpers import Workers, process_hash, wait_for_processes
from tests.support.processes import wait_until
from tests.support.sets import add_to_set
from tests.web import jobs
from tests.web.helpers import Web, run_bulk, token_of, zset_jids
from tests.web.scenario import WEB_APP, seed


def test_retry_a_dead_job_from_the_ui_and_it_runs(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A job that failed into dead is retried from the Dead page and this time it succeeds."""
    seeded = seed(workers, enqueuer, raw)
    raw.set(f"allow:{seeded.dead}", "1")
    token = token_of(raw, "cogworker:{q:web}:dead", seeded.dead)
    page = web.act("/dead/act", {"row": f"retry:{token}"})
    assert "Retried 1 job." in page.text
    wait_until(lambda: raw.sismember("done", seeded.dead), message="the retried job never ran")
    assert seeded.dead not in zset_jids(raw, "cogworker:{q:web}:dead")
    assert int(raw.get(f"runs:{seeded.dead}") or 0) == 2


def test_retry_of_an_entry_already_gone_says_so(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Retrying an entry someone else took is a message, not an error, and moves nothing."""
    seeded = seed(workers, enqueuer, raw)
    token = token_of(raw, "cogworker:{q:web}:dead", seeded.dead)
    score = token.split("/")[0]
    raw.zremrangebyscore("cogworker:{q:web}:dead", score, score)
    page = web.act("/dead/act", {"row": f"retry:{token}"})
    assert page.status_code == 200
    assert "Retried 0 jobs. 1 job was already gone." in page.text


def test_delete_from_dead_runs_no_death_hook(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Deleting a dead job removes it and nothing else: no hook, no requeue."""
    seeded = seed(workers, enqueuer, raw)
    before = raw.get(f"runs:{seeded.dead}")
    page = web.act(
        "/dead/act", {"row": f"delete:{token_of(raw, 'cogworker:{q:web}:dead', seeded.dead)}"}
    )
    assert "Deleted 1 job." in page.text
    assert seeded.dead not in zset_jids(raw, "cogworker:{q:web}:dead")
    assert raw.get(f"runs:{seeded.dead}") == before
    assert raw.llen(keys.queue("web")) == 0


def test_kill_moves_a_retry_to_dead(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Kill on the Retries page files the entry in dead, byte for byte."""
    seeded = seed(workers, enqueuer, raw)
    entry = raw.zrange("cogworker:{q:web}:retry", 0, 0)[0]
    page = web.act(
        "/retries/act",
        {"row": f"kill:{token_of(raw, 'cogworker:{q:web}:retry', seeded.retrying)}"},
    )
    assert "Killed 1 job." in page.text
    assert raw.zcard("cogworker:{q:web}:retry") == 0
    assert raw.zscore("cogworker:{q:web}:dead", entry) is not None


def test_enqueue_a_scheduled_job_now(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """ "Enqueue now" puts a job scheduled an hour away on its queue, and it runs."""
    seeded = seed(workers, enqueuer, raw)
    token = token_of(raw, "cogworker:{q:web}:schedule", seeded.scheduled)
    page = web.act("/scheduled/act", {"row": f"enqueue:{token}"})
    assert "Enqueued 1 job." in page.text
    wait_until(lambda: raw.sismember("done", seeded.scheduled), message="it never ran")
    assert raw.zcard("cogworker:{q:web}:schedule") == 0


def test_bulk_retry_of_the_selection(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Selected dead jobs are all retried by one action; the others stay."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    jids = [str(enqueuer.enqueue(jobs.FailsUntilAllowed, n)) for n in range(4)]
    wait_until(lambda: raw.zcard("cogworker:{q:web}:dead") == 4, message=worker.log_tail)
    chosen = jids[:3]
    for jid in chosen:
        raw.set(f"allow:{jid}", "1")
    tokens = [token_of(raw, "cogworker:{q:web}:dead", jid) for jid in chosen]
    page = web.act("/dead/act", {"action": "retry", "e": tokens})
    assert "Retried 3 jobs." in page.text
    wait_until(lambda: raw.scard("done") == 3, message=worker.log_tail)
    assert zset_jids(raw, "cogworker:{q:web}:dead") == [jids[3]]


def test_an_entry_selected_twice_is_retried_once(web: Web, raw: redis.Redis) -> None:
    """A form naming one retry twice moves it once, and says the second was already gone."""
    entry = {"class": "app.Job", "queue": "web", "jid": "twice", "args": [], "retry": True}
    add_to_set(raw, "cogworker:{q:web}:retry", {json.dumps({**entry, "created_at": 1.0}): 5.0})
    token = token_of(raw, "cogworker:{q:web}:retry", "twice")
    page = web.act("/retries/act", {"action": "retry", "e": [token, token]})
    assert "Retried 1 job. 1 job was already gone." in page.text
    assert raw.llen(keys.queue("web")) == 1


def test_bulk_on_all_matching_acts_on_those_only_and_says_how_it_went(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The confirmation names the filter and the set's size; the run deletes the matching
    entries only, and its page ends with the count."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    for n in range(3):
        enqueuer.enqueue(jobs.FailsUntilAllowed, f"alpha {n}")
    keep = str(enqueuer.enqueue(jobs.KilledByRetryIn, "beta"))
    wait_until(lambda: raw.zcard("cogworker:{q:web}:dead") == 4, message=worker.log_tail)
    query = {"action": "delete", "class": "FailsUntil"}
    confirm = web.get("/dead/bulk", params=query)
    assert confirm.status_code == 200
    assert "matching the filter class = “FailsUntil”" in confirm.text
    assert "(4 in dead now)" in confirm.text
    form = {name: value for name, value in _hidden_fields(confirm.text) if name != "_csrf_token"}
    assert form == query
    progress = run_bulk(web, "dead", form)
    assert progress == {"state": "finished", "stopping": False, "size": 4, "scanned": 4,
                        "matched": 3, "done": 3, "gone": 0, "skipped": 0}  # fmt: skip
    assert zset_jids(raw, "cogworker:{q:web}:dead") == [keep]
    page = web.get("/dead/bulk", params=query).text
    assert "Finished: deleted 3 jobs of 3 matching, 4 entries looked at." in page


def _hidden_fields(html: str) -> list[tuple[str, str]]:
    return [
        (name, html_lib.unescape(value))
        for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', html)
    ]


def test_clear_a_queue_after_a_confirmation_with_the_count(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Clear asks first, stating how many jobs go; then the queue is empty and unregistered."""
    for n in range(5):
        enqueuer.enqueue(jobs.Parked, n)
    confirm = web.get("/queue/clear?name=parked")
    assert "deletes all <strong>5</strong> jobs" in confirm.text
    page = web.act("/queue/clear", {"name": "parked"})
    assert "Deleted 5 jobs." in page.text
    assert raw.llen(keys.queue("parked")) == 0
    assert not raw.sismember("cogworker:queues", "parked")


def test_pause_then_resume_a_queue_shows_and_stores_the_pause(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Pause (with the CSRF token only) marks the queue paused on Queues and Overview, its
    jobs untouched; pausing twice changes nothing; Resume takes the mark away."""
    enqueuer.enqueue(jobs.Parked, 1)
    assert "cw-paused" not in web.get("/queues").text
    assert web.client.post("/queue/pause", data={"name": "parked"}).status_code == 403  # no token
    assert enqueuer.paused_queues() == frozenset()
    page = web.act("/queue/pause", {"name": "parked"})
    assert "Paused 1 queue." in page.text
    assert 'action="/queue/resume"' in page.text
    assert "cw-paused" in page.text
    assert "cw-paused" in web.get("/").text
    assert enqueuer.paused_queues() == {"parked"}
    assert raw.llen(keys.queue("parked")) == 1
    assert "Paused 0 queues." in web.act("/queue/pause", {"name": "parked"}).text
    resumed = web.act("/queue/resume", {"name": "parked"})
    assert "Resumed 1 queue." in resumed.text
    assert "cw-paused" not in resumed.text
    assert enqueuer.paused_queues() == frozenset()


def test_a_paused_queue_with_no_jobs_is_listed_so_it_can_be_resumed(
    web: Web, enqueuer: cogworker.Client
) -> None:
    """A queue paused before any job was pushed onto it still shows, with its Resume button."""
    enqueuer.pause("later")
    page = web.get("/queues").text
    assert "cw-paused" in page
    assert 'value="later"' in page


def test_delete_one_job_from_a_queue(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A queued job can be deleted by its jid; deleting it again says it is gone."""
    first, second = (str(enqueuer.enqueue(jobs.Parked, n)) for n in range(2))
    page = web.act("/queue/delete", {"name": "parked", "key": first})
    assert "Deleted 1 job." in page.text
    assert [json.loads(e)["jid"] for e in raw.lrange(keys.queue("parked"), 0, -1)] == [second]
    again = web.act("/queue/delete", {"name": "parked", "key": first})
    assert "1 job was already gone." in again.text


def test_quiet_resume_and_stop_reach_a_real_worker(
    web: Web, workers: Workers, raw: redis.Redis
) -> None:
    """Quiet, then resume, then stop: the process's heartbeat shows each, and it exits."""
    worker = workers.start(WEB_APP)
    (identity,) = wait_for_processes(raw, 1, worker)
    page = web.act("/workers/signal", {"identity": identity, "signal": "quiet"})
    assert "Asked to quiet 1 process." in page.text
    wait_until(lambda: process_hash(raw, identity).get("quiet") == "true", message=worker.log_tail)
    assert 'value="resume"' in web.get("/workers").text
    web.act("/workers/signal", {"identity": identity, "signal": "resume"})
    wait_until(lambda: process_hash(raw, identity).get("quiet") == "false", message=worker.log_tail)
    web.act("/workers/signal", {"identity": identity, "signal": "stop"})
    assert worker.wait_for_exit(15.0) == 0
    gone = web.act("/workers/signal", {"identity": identity, "signal": "quiet"})
    assert "1 process had already exited." in gone.text


def test_quiet_all_and_stop_all(web: Web, workers: Workers, raw: redis.Redis) -> None:
    """Quiet all reaches every process; stop all stops them all."""
    started = [workers.start(WEB_APP) for _ in range(2)]
    identities = wait_for_processes(raw, 2, *started)
    page = web.act("/workers/signal-all", {"signal": "quiet"})
    assert "Asked to quiet 2 processes." in page.text
    wait_until(lambda: all(process_hash(raw, i).get("quiet") == "true" for i in identities))
    web.act("/workers/signal-all", {"signal": "stop"})
    for worker in started:
        assert worker.wait_for_exit(15.0) == 0


def test_read_only_shows_no_buttons_and_refuses_every_action(
    config: cogworker.Config, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """In read-only mode the pages have no action forms and every action is a 403."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done))
    with TestClient(create_app(config, read_only=True)) as client:
        web = Web(client)
        page = web.get("/scheduled").text
        assert jid in page
        assert "Enqueue selected" not in page
        assert "read-only" in page
        token = client.cookies.get("cogworker_csrf") or ""
        for path, data in (
            (
                "/scheduled/act",
                {"row": f"enqueue:{token_of(raw, 'cogworker:{q:web}:schedule', jid)}"},
            ),
            ("/scheduled/bulk", {"action": "delete"}),
            ("/scheduled/bulk/cancel", {"action": "delete"}),
            ("/queue/clear", {"name": "web"}),
            ("/queue/delete", {"name": "web", "key": jid}),
            ("/queue/pause", {"name": "web"}),
            ("/queue/resume", {"name": "web"}),
            ("/workers/signal", {"identity": "x", "signal": "stop"}),
            ("/workers/signal-all", {"signal": "stop"}),
            ("/periodic/enqueue", {"name": "x"}),
        ):
            response = client.post(path, data={"_csrf_token": token, **data})
            assert response.status_code == 403, path
    assert raw.zcard("cogworker:{q:web}:schedule") == 1
    assert not raw.exists("cogworker:paused")
