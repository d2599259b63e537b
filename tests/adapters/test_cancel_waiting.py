"""Cancel's search of the retry and schedule sets: a job among many retries is found in a
few `ZSCAN` calls (each looking at `ZSCAN_COUNT` entries), not thousands."""

from __future__ import annotations

import json

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.cancelling import CancelResult
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

RETRIES = 20_000


def _retry(jid: str) -> str:
    return json.dumps({"class": "app.Send", "queue": "default", "jid": jid, "args": [],
                       "retry": True, "created_at": 1.7e9, "enqueued_at": 1.7e9})  # fmt: skip


def _zscan_calls(rc: redis.Redis) -> int:
    stats = rc.info("commandstats").get("cmdstat_zscan", {"calls": 0})
    return int(stats["calls"])


def test_a_job_among_many_retries_is_cancelled_in_a_few_scans(
    rc: redis.Redis, client: cogworker.Client
) -> None:
    jids = [f"{n:024x}" for n in range(RETRIES)]
    pipe = rc.pipeline(transaction=False)
    pipe.sadd(keys.PARTS, "default")  # as the settlements filing them did
    for first in range(0, RETRIES, 1_000):
        batch = jids[first : first + 1_000]
        pipe.zadd(
            keys.retry("default"), {_retry(jid): 4e9 + n for n, jid in enumerate(batch, first)}
        )
    pipe.execute()
    target = jids[RETRIES // 2]
    rc.config_resetstat()
    assert client.cancel(target) is CancelResult.REMOVED
    assert rc.zcard(keys.retry("default")) == RETRIES - 1
    assert rc.zscore(keys.retry("default"), _retry(target)) is None
    assert _zscan_calls(rc) <= 2 * RETRIES // 1_000 + 2
