"""Cancel from the dashboard: on the job page and in "Running now", through `Client.cancel`,
with what happened in the banner; refused in read-only mode."""

from __future__ import annotations

import re

import redis
from litestar.testing import TestClient

import cogworker
from cogworker.app.web import create_app
from tests.app.helpers import Workers, wait_for_processes
from tests.support.processes import wait_until
from tests.web import jobs
from tests.web.helpers import Web
from tests.web.scenario import WEB_APP


def test_cancel_on_the_job_page_takes_a_waiting_job_off(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A scheduled job's page has Cancel; it removes the job, and the page then says cancelled."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Spins, "later"))
    assert 'action="/cancel"' in web.get(f"/job?jid={jid}").text
    page = web.act("/cancel", {"jid": jid, "back": "job"})
    assert "Cancelled: the job was taken off before it ran." in page.text
    assert raw.zcard("cogworker:{q:web}:schedule") == 0
    assert re.search(r'class="tag [a-z-]+ cw-ending">Cancelled<', page.text)
    assert "Before its first run · cancelled" in page.text
    again = web.act("/cancel", {"jid": jid, "back": "job"})
    assert "Nothing to cancel: the job had already finished." in again.text


def test_cancel_in_running_now_stops_the_running_job(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """The row's Cancel signals the process; the job ends as cancelled and leaves the list."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    jid = str(enqueuer.enqueue(jobs.Spins, "spin"))
    wait_until(lambda: jid in web.get("/workers").text, message=worker.log_tail)
    running = web.get("/workers").text
    assert re.search(rf'name="jid" value="{jid}">\s*<input type="hidden" name="back"', running)
    assert "Running for" in running
    page = web.act("/cancel", {"jid": jid, "back": "workers"})
    assert page.url.path == "/workers"
    assert "Cancel sent: the process running the job will stop it" in page.text
    wait_until(lambda: enqueuer.status(jid) == "cancelled", message=worker.log_tail)
    wait_until(lambda: "Running now (0)" in web.get("/workers").text, message=worker.log_tail)
    assert raw.scard("done") == 0


def test_cancel_of_an_unknown_jid_and_of_a_malformed_one(web: Web) -> None:
    """Not found is a banner; a value no jid can be is a 400 naming it."""
    page = web.act("/cancel", {"jid": "nosuchjid", "back": "job"})
    assert "Nothing to cancel: no such job was found." in page.text
    refused = web.post("/cancel", {"jid": "bad jid!", "back": "job"})
    assert refused.status_code == 400
    assert "bad jid!" in refused.text


def test_cancel_is_refused_in_read_only_mode(
    config: cogworker.Config, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """No Cancel button, and a forged POST is a 403 that leaves the job where it was."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Spins, "later"))
    with TestClient(create_app(config, read_only=True)) as client:
        read_only = Web(client)
        assert 'action="/cancel"' not in read_only.get(f"/job?jid={jid}").text
        token = client.cookies.get("cogworker_csrf") or ""
        refused = client.post("/cancel", data={"jid": jid, "_csrf_token": token})
    assert refused.status_code == 403
    assert raw.zcard("cogworker:{q:web}:schedule") == 1
