"""Helpers of the dashboard tests: a client that posts forms with the CSRF token, and readers."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs
import httpx
import redis
from litestar.testing import TestClient

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.periodic_store import encode_entry
from cogworker.app.web.cursor import Cursor
from cogworker.domain.cron import ScheduleEntry
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.redis_server import free_port


@attrs.define
class Web:
    """A Litestar test client plus the CSRF token its first page handed out."""

    client: TestClient[Any]
    prefix: str = ""

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        """GET a dashboard path (under the prefix)."""
        return self.client.get(self.prefix + path, **kwargs)

    def token(self) -> str:
        """The CSRF token: the forms carry the cookie's value, which any page sets."""
        self.get("/about")
        found = self.client.cookies.get("cogworker_csrf")
        assert found, "no CSRF cookie"
        return str(found)

    def post(self, path: str, data: dict[str, Any], **kwargs: Any) -> httpx.Response:
        """POST a form with the token, as the page's form would; redirects not followed."""
        form = {"_csrf_token": self.token(), **data}
        return self.client.post(self.prefix + path, data=form, follow_redirects=False, **kwargs)

    def act(self, path: str, data: dict[str, Any]) -> httpx.Response:
        """POST a form and follow the 303 to the page that reports the outcome."""
        response = self.post(path, data)
        assert response.status_code == 303, (response.status_code, response.text[:500])
        return self.client.get(response.headers["location"])


def run_bulk(web: Web, slug: str, form: dict[str, str], timeout: float = 30.0) -> dict[str, Any]:
    """Start the action on everything matching on a set's page (`form`: its action and
    filter), wait until it has stopped, and return its last progress."""
    assert web.post(f"/{slug}/bulk", form).status_code == 303

    def ended() -> dict[str, Any] | None:
        progress: dict[str, Any] = web.get(f"/{slug}/bulk/progress", params=form).json()
        return progress if progress["state"] != "running" else None

    return wait_until(ended, timeout, message=f"the bulk {form} on {slug} never ended")


def zset_jids(rc: redis.Redis, key: str) -> list[str]:
    """The jids in a sorted set (entries that aren't JSON objects skipped)."""
    found = []
    for member in rc.zrange(key, 0, -1):
        try:
            found.append(json.loads(member)["jid"])
        except (ValueError, KeyError, TypeError):
            continue
    return found


def token_of(rc: redis.Redis, key: str, jid: str) -> str:
    """The `SCORE/PART~JID` a page's form sends for the entry of `jid` in a queue's sorted
    set `key` (`cogworker:{q:PART}:...`)."""
    part = key[len(keys.QUEUE_HEAD) : key.rindex("}:")]
    for member, score in rc.zrange(key, 0, -1, withscores=True):
        if json.loads(member).get("jid") == jid:
            return str(Cursor(score=score, key=jid, part=part))
    raise AssertionError(f"{jid} is not in {key}")


def schedule_entry(name: str, **fields: object) -> str:
    """A periodic schedule entry as the workers store it (fields overridable)."""
    values: dict[str, object] = {
        "name": name, "cron": "*/5 * * * *", "tz": "UTC", "class_name": "tests.web.jobs.Done",
        "queue": "web", "retry": True, "args": ("nightly",), "added_at": 1.7e9,
        "next_run": 4.1e9, "last_run": 1.7e9 + 300, "last_jid": "lastjid01",
    }  # fmt: skip
    values.update(fields)
    return encode_entry(ScheduleEntry(**values))  # type: ignore[arg-type]


@contextlib.contextmanager
def serving(
    directory: Path,
    *args: str,
    root: str = "",
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """`cogworker serve ARGS --port P` (a free port), once its health check answers under
    `root`; the base URL (`http://127.0.0.1:P` + `root`)."""
    port = free_port()
    command = ["serve", *args, "--port", str(port)]
    with CogworkerProcess(command, directory=directory, env=env, name="serve") as server:
        base = f"http://127.0.0.1:{port}{root}"
        wait_until(
            lambda: httpx.get(base + "/health", timeout=1).status_code == 200,
            15.0,
            ignore=(httpx.HTTPError,),
            message=server.log_tail,
        )
        yield base
