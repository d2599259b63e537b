"""Hostile data from Redis is shown as text on every page, never as markup."""

from __future__ import annotations

import json

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, wait_for_processes
from tests.support.processes import wait_until
from tests.support.sets import add_to_set
from tests.web import jobs
from tests.web.class_runs import settle_runs
from tests.web.helpers import Web
from tests.web.scenario import WEB_APP

SCRIPT = '<script>alert("cw-xss")</script>'
HANDLER = '" onmouseover="cw_xss()" x="'
IMAGE = "<img src=x onerror=cw_xss()>"
QUOTES = "'single' \"double\" `back`"
HOSTILE = f"{SCRIPT}{HANDLER}{IMAGE}{QUOTES}"
HUGE = "H" * 1_000_000
#: Substrings that only appear when something was not escaped.
TELLTALES = ("<script>alert(", 'onmouseover="cw_xss', "<img src=x")


def _payload(**fields: object) -> str:
    job = {"class": "tests.web.jobs.Done", "queue": "web", "jid": "j", "args": [], "retry": True}
    job["created_at"] = 1.0
    job.update(fields)
    return json.dumps(job)


def _seed_hostile(raw: redis.Redis, now: float) -> list[str]:
    """Entries no client would write (hostile class, queue, jid, identity; bytes that aren't
    JSON or UTF-8), straight into the keys the engine uses; the jids to visit."""
    hostile_jid = "jid" + SCRIPT
    add_to_set(raw, "cogworker:{q:web}:dead", {
        _payload(jid=hostile_jid, **{"class": HOSTILE}, queue=HOSTILE, error_class=HOSTILE,
                 error_message=HOSTILE, error_backtrace=HOSTILE,
                 args=[HOSTILE, {HOSTILE: HOSTILE}]): now,
        b"\xff\xfe not utf-8 " + SCRIPT.encode(): now - 1,
        "not json at all " + SCRIPT: now - 2,
        json.dumps([SCRIPT]): now - 3,
        _payload(jid="huge", args=[HUGE], error_message=HUGE): now - 4,
    })  # fmt: skip
    add_to_set(
        raw,
        "cogworker:{q:web}:retry",
        {_payload(jid="r" + HANDLER, error_message=HOSTILE): now + 60},
    )
    add_to_set(
        raw, "cogworker:{q:web}:schedule", {_payload(jid="s" + IMAGE, args=[IMAGE]): now + 60}
    )
    raw.sadd("cogworker:queues", HOSTILE)
    raw.lpush(keys.queue(HOSTILE), _payload(jid="q" + QUOTES, queue=HOSTILE))
    raw.lpush(keys.queue(HOSTILE), b"\xff" + SCRIPT.encode())
    identity = "host" + SCRIPT + HANDLER
    raw.sadd("cogworker:processes", identity)
    raw.hset(keys.process(identity), mapping={
        "identity": identity, "hostname": HOSTILE, "pid": HOSTILE, "queues": HOSTILE,
        "concurrency": HOSTILE, "beat": now, "rss_kb": HOSTILE, "version": HOSTILE,
        "quiet": HOSTILE, "started_at": HOSTILE,
    })  # fmt: skip
    raw.hset(keys.workers(identity), mapping={
        HOSTILE: json.dumps({"jid": hostile_jid, "class": HOSTILE, "queue": HOSTILE,
                             "args": [HOSTILE], "run_at": HOSTILE}),
        "t2": b"\xff" + SCRIPT.encode(),
    })  # fmt: skip
    raw.zadd(keys.memory_history(identity), {f"{int(now) - int(now) % 900}:{SCRIPT}": now})
    raw.rpush(f"cogworker:{{q:}}:attempts:{hostile_jid}", json.dumps({
        "attempt": HOSTILE, "failed_at": HOSTILE, "error_class": HOSTILE,
        "error_message": HOSTILE, "outcome": HOSTILE,
    }), b"\xff" + SCRIPT.encode())  # fmt: skip
    raw.rpush(f"cogworker:{{q:}}:history:{hostile_jid}", json.dumps({
        "started_at": HOSTILE, "duration": HOSTILE, "outcome": HOSTILE,
        "process": HOSTILE, "queue": HOSTILE, "error": HOSTILE,
    }))  # fmt: skip
    raw.hset(f"cogworker:{{q:}}:status:{hostile_jid}", "status", HOSTILE)
    settle_runs(raw, HOSTILE, [1_500, 90_000], now, failed=1, queue=HOSTILE)
    return [hostile_jid, "r" + HANDLER, "s" + IMAGE, "q" + QUOTES, "huge", SCRIPT]


def _pages(jids: list[str]) -> list[tuple[str, dict[str, str]]]:
    pages: list[tuple[str, dict[str, str]]] = [
        (path, {}) for path in ("/", "/workers", "/queues", "/scheduled", "/retries", "/dead")
    ]
    pages += [("/queue", {"name": HOSTILE}), ("/queue/clear", {"name": HOSTILE})]
    pages += [("/job", {"jid": jid}) for jid in jids] + [("/history", {"jid": jids[0]})]
    pages += [("/dead", {"class": SCRIPT, "error": HANDLER, "queue": IMAGE, "jid": QUOTES})]
    pages += [("/dead/bulk", {"action": "delete", "error": SCRIPT})]
    pages += [("/job-metrics", {}), ("/job-metrics/class", {"name": HOSTILE})]
    return pages


def assert_escaped(html: str, where: str) -> None:
    """None of the telltales of unescaped markup is in `html`."""
    for telltale in TELLTALES:
        assert telltale not in html, f"{where}: unescaped {telltale!r}"


def test_hostile_entries_are_escaped_on_every_page(web: Web, raw: redis.Redis) -> None:
    """Script tags, handlers, quotes, non-UTF-8 and non-JSON entries render as text everywhere."""
    jids = _seed_hostile(raw, float(raw.time()[0]))
    for path, query in _pages(jids):
        for headers in ({}, {"HX-Request": "true"}):
            response = web.get(path, params=query, headers=headers)
            assert response.status_code == 200, (path, query, response.text[:300])
            assert_escaped(response.text, f"{path} {query}")
            assert len(response.content) < 400_000, f"{path}: a huge value was not cut"
    dead = web.get("/dead").text
    assert "&lt;script&gt;alert(" in dead  # shown, as text
    assert "\\xff\\xfe not utf-8" in dead
    assert "&lt;script&gt;alert(" in web.get("/job-metrics").text  # the hostile class's row


def test_hostile_args_and_errors_from_a_real_worker_are_escaped(
    web: Web, workers: Workers, enqueuer: cogworker.Client, raw: redis.Redis
) -> None:
    """Args enqueued by a client and the error a real job raised with them stay text."""
    worker = workers.start(WEB_APP)
    wait_for_processes(raw, 1, worker)
    jid = str(enqueuer.enqueue(jobs.FailsUntilAllowed, HOSTILE, {"k": SCRIPT}))
    wait_until(lambda: raw.zcard("cogworker:{q:web}:dead") == 1, message=worker.log_tail)
    for path in ("/dead", f"/job?jid={jid}", "/"):
        html = web.get(path).text
        assert_escaped(html, path)
    assert "not allowed yet" in web.get(f"/job?jid={jid}").text


@pytest.mark.parametrize(
    "query",
    [
        "/dead?per=7",
        "/dead?per=25&per=50",
        "/dead?after=nonsense",
        "/dead?after=nan~x",
        "/dead?after=1e999~x",
        "/dead?class=" + "x" * 201,
        "/dead?error=%00",
        "/?period=1y",
        "/job-metrics?sort=nope",
        "/queue?name=x&page=0",
        "/queue?name=x&page=-1",
        "/queue?name=x&page=999999999999999",
        "/dead/bulk?action=explode",
        "/scheduled/bulk?action=kill",
        "/job?jid=" + "j" * 1001,  # a payload's jid is shown whole up to 1000
    ],
)
def test_bad_query_parameters_are_a_400(web: Web, query: str) -> None:
    """Every parameter is checked: garbage is a 400 with a page, never a 500."""
    response = web.get(query)
    assert response.status_code == 400, response.text[:300]
    assert "query parameter" in response.text
    assert_escaped(response.text, query)


BIDI_NAME = "\u202egnp.exe"
ZERO_WIDTH = "pay\u200bpal"


@pytest.mark.parametrize("path", ["/scheduled", "/job?jid=bidi"])
def test_direction_and_invisible_characters_are_shown_as_escapes(
    web: Web, raw: redis.Redis, path: str
) -> None:
    """A right-to-left override or a zero-width space in job data shows as its escape, so an
    override before `gnp.exe` can't make it pass for `exe.png`; nothing invisible is shown."""
    add_to_set(
        raw, "cogworker:{q:web}:schedule", {_payload(jid="bidi", args=[BIDI_NAME, ZERO_WIDTH]): 2e9}
    )
    page = web.get(path)
    assert page.status_code == 200
    assert "\\u202egnp.exe" in page.text
    assert "pay\\u200bpal" in page.text
    assert "\u202e" not in page.text
    assert "\u200b" not in page.text


def test_every_data_cell_is_its_own_direction_run(web: Web) -> None:
    """The stylesheet isolates table cells, definitions and code from each other's direction."""
    css = web.get("/static/app.css").text
    assert "td, dd, pre, code { unicode-bidi: isolate; }" in css
