"""What a page says an action did can't be forged from a link, every listed jid's link opens,
and "… all" is offered only when there is something to act on."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, urlsplit

import redis

from cogworker.adapters import redis_keys as keys
from tests.support.sets import add_to_set
from tests.web.helpers import Web

#: Jids a payload may hold that no form could type: control characters, spaces at the ends,
#: a percent sign and what looks like a cursor's separators.
ODD_JIDS = ["bell\x07jid", "line\nbreak", " padded ", "50%25~off/@1", "x" * 300]


def _dead(raw: redis.Redis, *jids: str, job_class: str = "app.Send") -> None:
    entries = {
        json.dumps({"class": job_class, "queue": "default", "jid": jid, "args": [],
                    "retry": True, "created_at": 1.7e9, "retry_count": 1}): 1.7e9 + number
        for number, jid in enumerate(jids)
    }  # fmt: skip
    add_to_set(raw, keys.dead("default"), entries)


def _notice(page: str) -> str | None:
    found = re.search(r'<p class="cw-notice" role="status">([^<]*)</p>', page)
    return html.unescape(found.group(1)) if found else None


def test_a_crafted_link_shows_no_notice(web: Web, raw: redis.Redis) -> None:
    """`/dead?done=delete&n=10000000` (or with a made-up seal) says nothing was done."""
    _dead(raw, "kept")
    assert _notice(web.get("/dead?done=delete&n=10000000").text) is None
    assert _notice(web.get("/dead?done=delete&n=10000000&sig=" + "0" * 64).text) is None
    assert _notice(web.get("/job?jid=kept&cancelled=removed").text) is None


def test_an_actions_notice_shows_only_where_and_to_whom_it_was_sent(
    web: Web, raw: redis.Redis
) -> None:
    """The page an action redirects to says what it did; the same link with another count,
    or opened in another browser, says nothing."""
    _dead(raw, "one", "two")
    posted = web.post("/dead/act", {"action": "delete", "e": _tokens(web.get("/dead").text)})
    assert posted.status_code == 303
    location = posted.headers["location"]
    assert _notice(web.client.get(location).text) == "Deleted 2 jobs."
    assert _notice(web.client.get(location.replace("n=2", "n=9")).text) is None
    web.client.cookies.clear()  # another browser: another CSRF cookie
    assert _notice(web.client.get(location).text) is None


def _tokens(page: str) -> list[str]:
    return [html.unescape(token) for token in re.findall(r'name="e" value="([^"]*)"', page)]


def test_every_listed_jid_opens_its_job_page(web: Web, raw: redis.Redis) -> None:
    """Each odd jid's link on Dead opens its job page, in Dead; its Retry there comes back
    to that very jid's page; a row's Delete on Dead works."""
    _dead(raw, *ODD_JIDS)
    links = re.findall(r'<a class="mono" href="(/job\?[^"]*)"', web.get("/dead").text)
    assert len(links) == len(ODD_JIDS)
    for link in links:
        opened = web.get(html.unescape(link))
        assert opened.status_code == 200, (link, opened.text[:300])
        assert '">Dead</span>' in opened.text, link
    back_to = []
    for link in links:
        form = _job_page_form(web.get(html.unescape(link)).text)
        retried = web.post("/dead/act", {**form, "row": "retry:" + form["row"]})
        back_to += parse_qs(urlsplit(retried.headers["location"]).query)["jid"]
    assert sorted(back_to) == sorted(ODD_JIDS)
    _dead(raw, *ODD_JIDS)
    for token in _tokens(web.get("/dead").text):
        assert _notice(web.act("/dead/act", {"row": "delete:" + token}).text) == "Deleted 1 job."
    assert raw.zcard(keys.dead("default")) == 0


def _job_page_form(page: str) -> dict[str, str]:
    """A job page's action form: its `back_jid`, and its Retry button's row token."""
    (back,) = re.findall(r'name="back_jid" value="([^"]*)"', page)
    (token,) = re.findall(r'name="row" value="retry:([^"]*)"', page)
    return {"back_jid": html.unescape(back), "row": html.unescape(token)}


def test_all_matching_is_offered_only_when_something_matches(web: Web, raw: redis.Redis) -> None:
    """A filter matching nothing hides "Retry all matching…" and "Delete all matching…"; one
    matching a job shows them."""
    _dead(raw, "kept", job_class="app.Send")
    nothing = web.get("/dead", params={"class": "app.Nothing"}).text
    assert "all matching…" not in nothing
    assert "Delete all matching…" in web.get("/dead", params={"class": "app.Send"}).text
    assert "Delete all…" in web.get("/dead").text
