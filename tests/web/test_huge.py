"""Huge values on the job page: collapsed to their start, with the whole entry a click (or a
download) away."""

from __future__ import annotations

import json

import redis

import cogworker
from tests.support.sets import add_to_set
from tests.web import jobs
from tests.web.helpers import Web


def test_a_megabyte_argument_is_collapsed_with_show_all_and_a_download(
    web: Web, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """A 1 MB argument and a 300 KB error: the page carries their first 2,000 characters and
    their length; "show all" gives the entry as stored, "download" the same as a file."""
    jid = "hugejob01"
    entry = {"jid": jid, "class": "app.Big", "queue": "q", "args": ["A" * 1_000_000],
             "retry": 0, "created_at": 1.7e9, "retry_count": 1, "error_class": "Boom",
             "error_message": "E" * 300_000}  # fmt: skip
    stored = json.dumps(entry)
    add_to_set(raw, "cogworker:{q:q}:dead", {stored: 1.7e9})
    page = web.get(f"/job?jid={jid}")
    assert len(page.text) < 50_000
    assert "A" * 1_990 in page.text
    assert "1,000,008 characters, the first 2,000 shown" in page.text
    assert "300,000 characters, the first 2,000 shown" in page.text
    shown = web.get(f"/job/raw?jid={jid}")
    assert shown.status_code == 200
    assert shown.headers["content-type"] == "text/plain; charset=utf-8"
    assert "attachment" not in shown.headers.get("content-disposition", "")
    assert shown.text == stored
    downloaded = web.get(f"/job/raw?jid={jid}&download=1")
    assert downloaded.headers["content-disposition"] == 'attachment; filename="job-hugejob01.json"'
    assert downloaded.text == stored


def test_small_values_have_no_show_all_and_unknown_jids_no_raw_entry(
    web: Web, enqueuer: cogworker.Client
) -> None:
    """A job of a few arguments shows them whole; a raw entry of nothing is a 404."""
    jid = str(enqueuer.enqueue_in(3600, jobs.Done, "small"))
    assert "show all" not in web.get(f"/job?jid={jid}").text
    assert web.get("/job/raw?jid=nosuchjid").status_code == 404
