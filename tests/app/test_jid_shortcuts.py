"""The `perform_*` shortcuts take the caller's jid, as the client's methods do."""

from __future__ import annotations

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.domain import payload
from tests.app.jobs import Count


def test_the_shortcuts_take_a_jid_and_push_it_once(
    rc: redis.Redis, configured: cogworker.Client
) -> None:
    """perform_async / perform_in with the caller's jid: a repeated call pushes nothing."""
    assert Count.perform_async(1, jid="order-1") == "order-1"
    assert Count.perform_async(1, jid="order-1") == "order-1"
    assert Count.perform_in(60, 2, jid="order-2") == "order-2"
    assert Count.perform_in(60, 2, jid="order-2") == "order-2"
    queued = [payload.decode(raw).unwrap().jid for raw in rc.lrange(keys.queue("default"), 0, -1)]
    assert queued == ["order-1"]
    assert rc.zcard(keys.schedule("default")) == 1
