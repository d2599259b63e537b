"""`/api/stats` as a script reads it: every queue with the same keys, whatever ran on it."""

from __future__ import annotations

import json

import redis

from cogworker.adapters import redis_keys as keys
from tests.web.helpers import Web


def test_every_queue_has_the_same_keys_with_zeros_where_nothing_ran(
    web: Web, raw: redis.Redis
) -> None:
    """A queue that ran jobs, one that never did (jobs waiting) and one SET by hand: the same
    keys on each; the one that never ran reads 0 processed, 0 failed, not paused."""
    raw.sadd(keys.QUEUES, "busy", "idle", "broken")
    raw.set(keys.stat("busy", "processed"), 7)
    raw.set(keys.stat("busy", "failed"), 2)
    job = {"class": "x.Y", "queue": "idle", "jid": "j1", "args": [], "created_at": 1.0}
    raw.lpush(keys.queue("idle"), json.dumps(job))
    raw.set(keys.queue("broken"), "not a list")
    answer = web.get("/api/stats").json()
    loads = {load["name"]: load for load in answer["queues"]}
    assert {name: sorted(load) for name, load in loads.items()} == {
        name: ["failed", "latency", "name", "paused", "problem", "processed", "size"]
        for name in ("broken", "busy", "idle")
    }
    assert (loads["busy"]["processed"], loads["busy"]["failed"]) == (7, 2)
    idle = {key: value for key, value in loads["idle"].items() if key != "latency"}
    assert idle == {"name": "idle", "size": 1, "paused": False, "processed": 0, "failed": 0,
                    "problem": None}  # fmt: skip
    assert sorted(answer["stats"]) == [
        "busy", "dead", "enqueued", "failed", "problems", "processed", "processes", "retries",
        "scheduled",
    ]  # fmt: skip
