"""Job links say where the job is, and the job page looks there only; a jid typed in is
searched for in chunks, within bounds, and redirects to where it was found."""

from __future__ import annotations

import html
import json
from urllib.parse import parse_qs, urlsplit

import pytest
import redis
from bench.dashboard_scale import first_link

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.app.web.cursor import Cursor
from cogworker.app.web.job_hint import InSet
from cogworker.app.web.locate import search
from tests.support.sets import add_to_set
from tests.web.helpers import Web
from tests.web.jobs import Kept

SCORE = 1.7e9


def _entry(jid: str, queue: str = "default") -> str:
    return json.dumps({"class": "app.Send", "queue": queue, "jid": jid, "args": [jid],
                       "retry": True, "created_at": SCORE, "enqueued_at": SCORE})  # fmt: skip


def _queue(raw: redis.Redis, *jids: str) -> None:
    """Jobs on `default`, the first one next to run."""
    raw.sadd(keys.QUEUES, "default")
    raw.lpush(keys.queue("default"), *[_entry(jid) for jid in jids])


@pytest.fixture
def store(raw: redis.Redis, config: cogworker.Config) -> DashboardStore:
    """The dashboard's store on the test's Redis."""
    return DashboardStore.on(raw, config.retention)


def test_a_link_from_each_list_finds_its_job_where_it_said(web: Web, raw: redis.Redis) -> None:
    """Dead (many entries sharing one score), Retries and a queue page link to the job with
    its place; the job page finds it there."""
    add_to_set(raw, keys.dead("default"), {_entry(f"dead{n:03d}"): SCORE for n in range(300)})
    add_to_set(raw, keys.retry("default"), {_entry("retry1"): SCORE + 60})
    _queue(raw, *[f"queued{n}" for n in range(30)])
    page2 = web.get("/dead", params={"after": f"{SCORE!r}@24/default~dead275"}).text
    queue_page = web.get("/queue?name=default&page=2").text
    for page, place, tag in ((page2, "dead", "Dead"),
                             (web.get("/retries").text, "retries", "Retrying"),
                             (queue_page, "queue", "Enqueued")):  # fmt: skip
        link = first_link(page, place)
        assert f"in={place}" in link
        job = web.get(link)
        assert job.status_code == 200
        assert f'">{tag}</span>' in job.text, link
        assert 'id="cw-live"' in job.text  # polls look where the link said
    assert "at=1700000000.0%4025%2Fdefault~dead274" in first_link(page2, "dead")


def test_a_queued_job_is_found_after_jobs_before_it_ran(web: Web, raw: redis.Redis) -> None:
    """The job 26th in line stays found by its link after ten jobs before it were taken."""
    _queue(raw, *[f"queued{n}" for n in range(30)])
    link = first_link(web.get("/queue?name=default&page=2").text, "queue")
    assert "at=25" in link
    raw.rpop(keys.queue("default"), 10)
    assert '">Enqueued</span>' in web.get(link).text


def test_a_queued_job_page_reads_the_entries_nearest_its_link_first(
    web: Web, raw: redis.Redis
) -> None:
    """The page of a job 2,500th in line, each entry ~1 KB, reads the hundred around the
    link's index (the dashboard gets each entry it reads), not the 2,000 before it; with
    200 jobs before it taken, it is found further on."""
    padded = [_entry(f"queued{n:04d}")[:-1] + f', "pad": "{"p" * 1_000}"}}' for n in range(3_000)]
    raw.sadd(keys.QUEUES, "default")
    raw.lpush(keys.queue("default"), *padded)
    link = "/job?jid=queued2500&in=queue&queue=default&at=2500"
    web.get(link)  # the layout check, trusted from then on
    before = raw.info("stats")["total_net_output_bytes"]
    assert '">Enqueued</span>' in web.get(link).text
    assert raw.info("stats")["total_net_output_bytes"] - before < 300_000
    raw.rpop(keys.queue("default"), 200)
    assert '">Enqueued</span>' in web.get(link).text


def test_a_job_gone_from_where_the_link_said_is_moved_with_a_search(
    web: Web, raw: redis.Redis
) -> None:
    """Deleted from dead and put in retry: its old link says it moved and offers a search,
    which finds it in Retries."""
    add_to_set(raw, keys.dead("default"), {_entry("mover1"): SCORE})
    link = first_link(web.get("/dead").text, "dead")
    raw.delete(keys.dead("default"))
    add_to_set(raw, keys.retry("default"), {_entry("mover1"): SCORE + 60})
    moved = web.get(link).text
    assert "Moved</span> It is no longer in Dead, where the link said" in moved
    assert 'href="/job?jid=mover1">Search for it</a>' in moved
    assert '">Retrying</span>' in web.get("/job?jid=mover1").text


def test_go_to_jid_redirects_to_where_it_found_the_job(web: Web, raw: redis.Redis) -> None:
    """A jid typed in is a 303 to its place's link (an action's notice kept); the raw entry
    is served by that link too."""
    add_to_set(raw, keys.dead("default"), {_entry(f"dead{n:03d}"): SCORE + n for n in range(600)})
    found = web.get("/job?jid=dead100&done=retry&n=0", follow_redirects=False)
    assert found.status_code == 303
    query = parse_qs(urlsplit(found.headers["location"]).query)
    at = f"{SCORE + 100!r}@0/default~dead100"
    assert query == {"jid": ["dead100"], "in": ["dead"], "at": [at], "done": ["retry"],
                     "n": ["0"]}  # fmt: skip
    raw_entry = web.get("/job/raw", params={"jid": "dead100", "in": "dead", "at": query["at"][0]})
    assert json.loads(raw_entry.text)["jid"] == "dead100"


def test_a_search_that_finds_nothing_says_so_and_does_not_poll(web: Web, raw: redis.Redis) -> None:
    """Not found: how many entries were looked at, and no live part (a poll would search)."""
    _queue(raw, *[f"queued{n}" for n in range(1_200)])
    page = web.get("/job?jid=nosuch")
    assert page.status_code == 200
    assert "Not found</span> in the places searched" in page.text
    assert "1,200 entries" in page.text
    assert 'id="cw-live"' not in page.text


def test_a_search_stops_at_its_bounds_and_says_how_far_it_got(
    store: DashboardStore, raw: redis.Redis
) -> None:
    """Entries: it stops after the chunk that reached the bound; time: after the chunk that
    ran past it (a clock that advances a second a call)."""
    _queue(raw, *[f"queued{n}" for n in range(2_000)])
    by_size = search(store, "nosuch", entries=1_000)
    assert (by_size.place, by_size.looked, by_size.stopped) == (None, 1_000, "after 1,000 entries")
    ticks = iter(range(100))
    by_time = search(store, "nosuch", seconds=1.5, clock=lambda: float(next(ticks)))
    assert (by_time.place, by_time.looked, by_time.stopped) == (None, 1_000, "after 1.5 s")
    assert search(store, "queued1999").place is not None


def test_a_job_keeping_its_result_is_found_in_the_queue_its_jid_index_names(
    store: DashboardStore, raw: redis.Redis, enqueuer: cogworker.Client
) -> None:
    """Deep in its queue, behind a queue searched before it by name: the index sends the
    search to its queue first, so the other queue's entries are never looked at."""
    _queue(raw, *[f"queued{n}" for n in range(1_200)])
    raw.lpush(keys.queue("web"), *[_entry(f"web{n}", "web") for n in range(1_200)])
    jid = enqueuer.enqueue(Kept)
    assert jid is not None
    assert raw.get(keys.jid_index(jid)) == b"web"
    found = search(store, jid)
    assert found.place is not None
    assert found.place.where == "web"
    assert found.looked <= 1_201


def _commands(raw: redis.Redis, web: Web, path: str) -> tuple[int, str]:
    """The Redis commands a request sent (the server's `commandstats`, the INFO calls
    reading it left out), and its page."""

    def sent() -> int:
        stats = raw.info("commandstats")
        return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")

    before = sent()
    page = web.get(path).text
    return sent() - before, page


@pytest.mark.parametrize(("name", "tag"), [("dead", "Dead"), ("retry", "Retrying"),
                                           ("schedule", "Scheduled")])  # fmt: skip
def test_go_to_jid_finds_a_plain_job_in_a_set_by_its_index_at_any_size(
    web: Web, raw: redis.Redis, name: str, tag: str
) -> None:
    """A plain job (no status, no result: no `cogworker:jid:J`), halfway down its set of
    3,000 entries or alone in one of 3: found with the same number of commands."""
    web.get("/about")  # the layout checked once, before
    counts = []
    for size in (3, 3_000):
        raw.flushall()
        key = keys.sorted_set(name, "default")
        add_to_set(raw, key, {_entry(f"job{n:05d}"): SCORE + n for n in range(size)})
        sent, page = _commands(raw, web, f"/job?jid=job{size // 2:05d}")
        assert f'">{tag}</span>' in page
        counts.append(sent)
    assert counts[0] == counts[1]


def test_go_to_jid_says_not_found_with_the_same_commands_at_any_size(
    web: Web, raw: redis.Redis
) -> None:
    """A jid in no set (and no queue): "not found" after the index's look-ups, whatever the
    sets hold."""
    web.get("/about")  # the layout checked once, before
    counts = []
    for size in (3, 3_000):
        raw.flushall()
        for name in keys.SET_NAMES:
            entries = {_entry(f"{name}{n:05d}"): SCORE + n for n in range(size)}
            add_to_set(raw, keys.sorted_set(name, "default"), entries)
        sent, page = _commands(raw, web, "/job?jid=nosuch")
        assert "Not found</span>" in page
        counts.append(sent)
    assert counts[0] == counts[1]


def test_go_to_jid_walks_the_entries_sharing_the_indexed_score_in_chunks(
    store: DashboardStore, raw: redis.Redis
) -> None:
    """600 dead entries of one score: the one asked for is found among them, its tie its
    place in the Dead page's walk (newest first: the reverse of member order)."""
    add_to_set(raw, keys.dead("default"), {_entry(f"dead{n:03d}"): SCORE for n in range(600)})
    found = search(store, "dead100")
    assert found.place is not None
    place = Cursor(score=SCORE, key="dead100", tie=499, part="default")
    assert found.place.hint == InSet(slug="dead", cursor=place)
    assert found.looked == 2 * 250  # two chunks of the entries sharing the score


@pytest.mark.parametrize(
    ("query", "named"),
    [("in=nowhere", "'in'"), ("in=dead", "'at'"), ("in=dead&at=x", "'at'"),
     ("in=queue&queue=default&at=-1", "'at'")],
)  # fmt: skip
def test_a_bad_place_is_a_400_naming_it(web: Web, query: str, named: str) -> None:
    """A place no link gives is refused, naming the parameter."""
    refused = web.get(f"/job?jid=x&{query}")
    assert refused.status_code == 400
    assert f"query parameter {named}" in html.unescape(refused.text)


def test_a_job_whose_status_says_it_ended_is_not_searched_for(web: Web, raw: redis.Redis) -> None:
    """A tracked job `complete`: the page says so, having looked at nothing."""
    _queue(raw, *[f"queued{n}" for n in range(600)])
    raw.hset(keys.status("default", "done01"), mapping={"status": "complete", "update_time": SCORE})
    page = web.get("/job?jid=done01").text
    assert 'cw-ending">Complete</span> It ran to completion' in page
    assert "Not found" not in page
