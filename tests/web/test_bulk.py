"""Actions on everything matching a filter, over 100,000 retries: each match reached and moved
once, the rest untouched, the progress shown, a cancel that leaves every entry in one place,
and a second run that finds nothing more to do."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from litestar.testing import TestClient
from playwright.sync_api import expect

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app
from tests.support.processes import wait_until
from tests.support.redis_server import RedisServer
from tests.support.sets import add_to_set
from tests.web.browser import Tab
from tests.web.helpers import Web, run_bulk

SIZE = 100_000
#: Every tenth entry is a ChargeCard job, on the billing queue; the others send mail.
MATCHES = {f"r{n:06d}" for n in range(SIZE) if n % 10 == 3}
#: Entries sharing one score (a downstream outage fails many jobs in the same second)...
TIED = 500
#: ...and the last ones parked at +inf.
AT_INF = 300
BILLING = keys.queue("billing")
#: Seconds a whole run over SIZE entries may take on a busy machine, at most.
RUN_TIMEOUT = 180.0


def _seed(raw: redis.Redis, size: int) -> None:
    """`size` retries as workers leave them, written a pipeline of ZADDs at a time."""
    pipe = raw.pipeline(transaction=False)
    for start in range(0, size, 10_000):
        batch = range(start, min(start + 10_000, size))
        add_to_set(pipe, keys.retry("billing"), {_payload(n): _score(n) for n in batch})
    pipe.execute()


def _payload(n: int) -> str:
    matches = f"r{n:06d}" in MATCHES
    return json.dumps({
        "class": "app.billing.ChargeCard" if matches else f"app.mail.SendEmail{n % 4}",
        "queue": "billing" if matches else "mail", "jid": f"r{n:06d}",
        "args": [n, {"customer": f"cus_{n:08d}", "note": "x" * 60}], "retry": 25,
        "created_at": 1.7e9, "enqueued_at": 1.7e9 + 1, "failed_at": 1.7e9 + 2,
        "retry_count": 1 + n % 5, "error_class": "ConnectionError",
        "error_message": f"upstream refused connection ({n})",
    })  # fmt: skip


def _score(n: int) -> float:
    return float("inf") if n >= SIZE - AT_INF else 1.8e9 + n // TIED


def _queued(raw: redis.Redis) -> list[str]:
    return [json.loads(entry)["jid"] for entry in raw.lrange(BILLING, 0, -1)]


def _retrying(raw: redis.Redis) -> set[str]:
    return {json.loads(entry)["jid"] for entry in raw.zrange(keys.retry("billing"), 0, -1)}


RETRY_CHARGES = {"action": "retry", "class": "ChargeCard"}


@pytest.fixture(scope="module")
def seeded(redis_server: RedisServer) -> bytes:
    """The SIZE retries as Redis serializes their set (DUMP): written once for the module
    (`_seed`), then put back whole by each test that needs them (`_restore`, in a third of
    the ZADDs' time)."""
    with redis_server.client(socket_timeout=30.0) as client:
        client.flushall()
        _seed(client, SIZE)
        dumped: bytes = client.dump(keys.retry("billing"))
        client.flushall()
    return dumped


def _restore(raw: redis.Redis, seeded: bytes) -> None:
    """The SIZE retries of `seeded`, in the test's (flushed) Redis, their queue a part."""
    raw.sadd(keys.PARTS, "billing")
    raw.restore(keys.retry("billing"), 0, seeded)


@pytest.fixture
def patient_web(config: cogworker.Config, redis_url: str) -> Iterator[Web]:
    """The dashboard on a client without the dashboard's short timeouts: its bulk actions
    wait out a `CLIENT PAUSE` instead of failing."""
    client = redis.Redis.from_url(redis_url)
    with TestClient(create_app(config, client=client)) as test_client:
        yield Web(test_client)
    client.close()


@pytest.fixture
def hasty_web(config: cogworker.Config, redis_url: str) -> Iterator[Web]:
    """The dashboard on a client that gives up on Redis after a second."""
    client = redis.Redis.from_url(redis_url, socket_timeout=1.0)
    with TestClient(create_app(config, client=client)) as test_client:
        yield Web(test_client)
    client.close()


def _progress(web: Web, query: dict[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = web.get("/retries/bulk/progress", params=query).json()
    return found


def test_cancel_stops_between_batches_with_every_entry_in_one_place(
    patient_web: Web, raw: redis.Redis, seeded: bytes
) -> None:
    """Writes paused while the first batch acts: the page shows the run and its counts, a
    second start shows the same run, Cancel stops it after that batch; every entry is then in
    retries or on its queue, never both, and a run to the end moves the rest, each once."""
    web = patient_web
    _restore(raw, seeded)
    raw.client_pause(120_000, all=False)  # writes wait; reads (the walk) go on
    try:
        web.post("/retries/bulk", RETRY_CHARGES)
        first = wait_until(
            lambda: _progress(web, RETRY_CHARGES)["scanned"] and _progress(web, RETRY_CHARGES)
        )
        assert first["state"] == "running"
        page = web.get("/retries/bulk", params=RETRY_CHARGES).text
        assert "Running, a batch at a time" in page
        assert re.search(r'data-cw-bulk-count="scanned">[\d,]+<', page)
        assert "Cancel</button>" in page
        web.post("/retries/bulk", RETRY_CHARGES)  # a second click: the same run, not another
        assert _progress(web, RETRY_CHARGES)["scanned"] == first["scanned"]
        assert web.post("/retries/bulk/cancel", RETRY_CHARGES).status_code == 303
        assert "Cancelling" in web.get("/retries/bulk", params=RETRY_CHARGES).text
    finally:
        raw.client_unpause()
    stopped = wait_until(
        lambda: (
            _progress(web, RETRY_CHARGES)["state"] == "cancelled" and _progress(web, RETRY_CHARGES)
        )
    )
    moved = _queued(raw)
    assert 0 < len(moved) == stopped["done"] < len(MATCHES)
    assert len(set(moved)) == len(moved)
    retrying = _retrying(raw)
    assert not set(moved) & retrying
    assert set(moved) | retrying == {f"r{n:06d}" for n in range(SIZE)}
    assert "Cancelled after" in web.get("/retries/bulk", params=RETRY_CHARGES).text

    web.post("/retries/bulk", RETRY_CHARGES)
    again = wait_until(
        lambda: (
            _progress(web, RETRY_CHARGES)["state"] == "finished" and _progress(web, RETRY_CHARGES)
        ),
        RUN_TIMEOUT,
    )
    assert again["done"] == len(MATCHES) - len(moved)
    assert sorted(_queued(raw)) == sorted(MATCHES)
    assert _retrying(raw) == {f"r{n:06d}" for n in range(SIZE)} - MATCHES


def test_retry_all_matching_over_100000_retries_reaches_every_match_in_the_browser(
    tab: Tab, raw: redis.Redis, seeded: bytes
) -> None:
    """From the filtered Retries page: "Retry all matching…", confirmed, shows its counts and
    ends with all 10,000 ChargeCard jobs on their queue, each once, the other 90,000 still
    waiting; run again, it finds nothing more to do."""
    _restore(raw, seeded)
    page = tab.go("/retries?class=ChargeCard")
    page.get_by_role("link", name="Retry all matching…").click()
    expect(page.locator(".cw-confirm")).to_contain_text("(100,000 in retries now)")
    page.get_by_role("button", name="Retry all matching").click()
    counts = page.locator("#cw-bulk")
    expect(counts).to_be_visible()
    expect(page.locator(".cw-bulk-state")).to_have_text(
        "Finished: retried 10,000 jobs of 10,000 matching, 100,000 entries looked at.",
        timeout=RUN_TIMEOUT * 1000,
    )
    done = page.locator('[data-cw-bulk-count="done"]')
    expect(done).to_have_text("10,000")
    tab.shot("bulk-finished")
    queued = _queued(raw)
    assert sorted(queued) == sorted(MATCHES)
    assert _retrying(raw) == {f"r{n:06d}" for n in range(SIZE)} - MATCHES

    page.get_by_role("button", name="Retry all matching again").click()
    expect(page.locator(".cw-bulk-state")).to_have_text(
        "Finished: retried 0 jobs of 0 matching, 90,000 entries looked at.",
        timeout=RUN_TIMEOUT * 1000,
    )
    assert len(_queued(raw)) == len(MATCHES)


def test_a_run_that_redis_fails_says_so_and_running_it_again_finishes_the_job(
    hasty_web: Web, raw: redis.Redis
) -> None:
    """Writes held past the client's timeout: the run stops as failed and its page says why;
    once Redis answers, running it again moves every match that is left, each exactly once
    (the writes of the failed batch went through late, or not at all)."""
    web = hasty_web
    _seed(raw, 2_000)
    matches = {jid for jid in MATCHES if int(jid[1:]) < 2_000}
    raw.client_pause(60_000, all=False)
    try:
        web.post("/retries/bulk", RETRY_CHARGES)
        failed = wait_until(
            lambda: (
                _progress(web, RETRY_CHARGES)["state"] == "failed" and _progress(web, RETRY_CHARGES)
            )
        )
        page = web.get("/retries/bulk", params=RETRY_CHARGES).text
        assert "Stopped by an error: TimeoutError" in page
        assert failed["done"] == 0
    finally:
        raw.client_unpause()
    again = run_bulk(web, "retries", RETRY_CHARGES)
    assert again["state"] == "finished"
    assert sorted(_queued(raw)) == sorted(matches)
    assert _retrying(raw) == {f"r{n:06d}" for n in range(2_000)} - matches


def test_a_run_over_the_sets_of_several_queues_moves_every_match_once(
    web: Web, raw: redis.Redis
) -> None:
    """Retries of three queues, more than a batch tying on one score across them: "Retry
    all matching" puts each match on its own queue once, leaving the others in retries."""
    queues = ("billing", "mail", "sms")
    for queue in queues:
        add_to_set(raw, keys.retry(queue), {
            json.dumps({"class": "ChargeCard" if n % 3 else "SendMail", "queue": queue,
                        "jid": f"{queue}{n:03d}", "args": [], "retry": True}): 4e9
            for n in range(150)
        })  # fmt: skip

    progress = run_bulk(web, "retries", RETRY_CHARGES)

    assert (progress["state"], progress["done"], progress["gone"]) == ("finished", 300, 0)
    for queue in queues:
        queued = [json.loads(entry)["jid"] for entry in raw.lrange(keys.queue(queue), 0, -1)]
        assert sorted(queued) == [f"{queue}{n:03d}" for n in range(150) if n % 3]
        left = {json.loads(entry)["class"] for entry in raw.zrange(keys.retry(queue), 0, -1)}
        assert (left, raw.zcard(keys.retry(queue))) == ({"SendMail"}, 50)
