"""A Redis of another key layout: every page is a 503 naming the cure (as a worker exits 2
and a client raises LayoutError), never a page misreading the keys; the pages come back
once the layout is this code's."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.domain import layout
from tests.web.helpers import Web

CURRENT = layout.current(layout.STEPS)
#: A key the release before layout step 1 wrote (the periodic schedule, under its old name).
OLD_KEY = layout.STEPS[0].renames[0].old


def _older(raw: redis.Redis) -> None:
    raw.hset(OLD_KEY, "nightly", "{}")


def _newer(raw: redis.Redis) -> None:
    raw.set(keys.LAYOUT, CURRENT + 1)


@pytest.mark.parametrize(
    ("layout_of", "cure"),
    [(_older, "run `cogworker migrate`"), (_newer, "upgrade cogworker")],
    ids=["older", "newer"],
)
def test_every_page_names_the_cure_until_the_layout_is_this_codes(
    web: Web, raw: redis.Redis, layout_of: Callable[[redis.Redis], None], cure: str
) -> None:
    layout_of(raw)
    for path in ("/", "/periodic", "/queues", "/job?jid=abc"):
        page = web.get(path)
        assert page.status_code == 503, path
        assert "Another key layout" in page.text
        assert cure in page.text
    assert web.get("/static/app.css").status_code == 200
    raw.delete(OLD_KEY)
    raw.set(keys.LAYOUT, CURRENT)
    assert web.get("/periodic").status_code == 200
