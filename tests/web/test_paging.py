"""Cursor pages of a set: complete while the set moves, bounded when filtered, and Redis down."""

from __future__ import annotations

import json
import re

import redis
from litestar.testing import TestClient

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app
from tests.conftest import UNREACHABLE_REDIS_URL
from tests.support.sets import add_to_set
from tests.web.helpers import Web


def _dead(raw: redis.Redis, scores: dict[str, float], queue: str = "q") -> None:
    add_to_set(
        raw,
        keys.dead(queue),
        {
            json.dumps({"class": "app.Job", "queue": queue, "jid": jid, "args": [],
                        "retry": True, "created_at": 1.0, "error_message": "boom"}): score
            for jid, score in scores.items()
        },
    )  # fmt: skip


def _jids(html: str) -> list[str]:
    return re.findall(r'class="mono" href="[^"]*">(j\d+)</a>', html)


def _next(html: str) -> str | None:
    found = re.search(r'href="(/dead\?[^"]*after=[^"]*)">Next page', html)
    return found.group(1).replace("&amp;", "&") if found else None


def test_next_pages_walk_the_whole_set_once_even_with_equal_scores(
    web: Web, raw: redis.Redis
) -> None:
    """Pages of 25 over 60 entries (many sharing a score) show each entry exactly once."""
    _dead(raw, {f"j{n:02d}": 100.0 + n // 20 for n in range(60)})
    seen: list[str] = []
    path: str | None = "/dead?per=25"
    while path is not None:
        html = web.get(path).text
        seen += _jids(html)
        path = _next(html)
    assert sorted(seen) == [f"j{n:02d}" for n in range(60)]


def test_pages_over_the_dead_sets_of_several_queues_show_each_entry_once_in_order(
    web: Web, raw: redis.Redis
) -> None:
    """Three queues' dead sets, their entries tying within a queue and across queues (and one
    in the migrated part): pages of 25 show each entry once, newest first, then by queue."""
    scores = {"q": 100.0, "p": 100.0, "r": 101.0}
    for queue, score in scores.items():
        _dead(raw, {f"j{queue}{n:02d}": score + (n >= 15) for n in range(20)}, queue)
    _dead(raw, {"jmigr": 101.0}, "")
    seen: list[str] = []
    path: str | None = "/dead?per=25"
    while path is not None:
        html = web.get(path).text
        seen += re.findall(r'class="mono" href="[^"]*">(j\w+)</a>', html)
        path = _next(html)
    expected = sorted(
        [(score + (n >= 15), queue, f"j{queue}{n:02d}") for queue, score in scores.items()
         for n in range(20)] + [(101.0, "", "jmigr")],
        reverse=True,
    )  # fmt: skip
    assert seen == [jid for _, _, jid in expected]


def test_a_cursor_whose_entry_is_gone_repeats_rather_than_skips(web: Web, raw: redis.Redis) -> None:
    """If the page's last entry was retried meanwhile, the next page still misses nothing."""
    _dead(raw, {f"j{n:02d}": 100.0 for n in range(30)})
    first = web.get("/dead?per=25").text
    shown = _jids(first)
    after = _next(first)
    assert after is not None
    raw.zrem(
        "cogworker:{q:q}:dead",
        *[m for m in raw.zrange("cogworker:{q:q}:dead", 0, -1) if shown[-1] in m.decode()],
    )
    rest: list[str] = []
    path: str | None = after
    for _ in range(5):  # a repeat costs a page at most; it never loops
        if path is None:
            break
        html = web.get(path).text
        rest += _jids(html)
        path = _next(html)
    assert path is None
    assert set(shown[:-1]) | set(rest) == {f"j{n:02d}" for n in range(30)} - {shown[-1]}


def test_a_filtered_page_says_how_far_it_looked(web: Web, raw: redis.Redis) -> None:
    """A filter matching nothing stops at the scan limit, says so and offers to go on."""
    _dead(raw, {f"j{n:04d}": float(n) for n in range(2_500)})
    html = web.get("/dead?jid=nothing").text
    assert "looks at 2,000 entries at most" in html
    assert "continue searching" in html


def test_redis_down_is_a_503_page_not_a_crash() -> None:
    """With Redis unreachable, pages say so with a 503 and the health check fails."""
    with TestClient(create_app(cogworker.Config(redis_url=UNREACHABLE_REDIS_URL))) as client:
        page = client.get("/")
        assert page.status_code == 503
        assert "reach Redis at redis://127.0.0.1:1/0 (" in page.text
        assert client.get("/health").status_code == 503


def test_a_cursor_whose_entry_moved_far_within_its_score_resumes_right_after_it(
    web: Web, raw: redis.Redis
) -> None:
    """60 entries sharing the cursor's score arrive before it (further than the first look
    reaches): the next pages show exactly the entries after it, none twice."""
    _dead(raw, {f"j{n:03d}": 100.0 for n in range(100)})
    first = web.get("/dead?per=25").text
    after = _next(first)
    assert after is not None
    # Dead pages go high to low, members too: "z.Late" > "app.Job" puts them before the cursor.
    add_to_set(
        raw,
        "cogworker:{q:q}:dead",
        {json.dumps({"class": "z.Late", "queue": "q", "jid": f"j9{n:02d}"}): 100.0
         for n in range(60)},
    )  # fmt: skip
    rest: list[str] = []
    path: str | None = after
    for _ in range(10):
        if path is None:
            break
        html = web.get(path).text
        rest += _jids(html)
        path = _next(html)
    assert path is None
    # Descending: the first page showed the highest 25 members, the rest come after them.
    assert _jids(first) + rest == [f"j{n:03d}" for n in reversed(range(100))]
