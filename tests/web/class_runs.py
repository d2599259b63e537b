"""Per-class metrics and run history written the way workers write them: runs settled by
the real settling scripts (`SettleStore.settle_many`), at a chosen time, without running
the jobs."""

from __future__ import annotations

import itertools
import json

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain.class_metrics import RunSample
from cogworker.domain.records import RunRecord, to_json

IDENTITY = "host:1:metrics-page"
_JIDS = itertools.count()


def settle_runs(
    rc: redis.Redis,
    class_name: str,
    micros: list[int],
    at: float,
    *,
    failed: int = 0,
    queue: str = "default",
) -> None:
    """Settle one run of `class_name` from `queue` per duration of `micros` (microseconds)
    ending at the time `at`, the first `failed` of them as failures sent to retry; each is
    kept in its class's history on `queue`."""
    orders = []
    for index, duration in enumerate(micros):
        jid = f"metrics{next(_JIDS)}"
        raw = json.dumps({"jid": jid, "class": class_name, "queue": queue}).encode()
        rc.lpush(keys.in_progress(queue, IDENTITY), raw)
        fails = index < failed
        run = RunRecord(jid=jid, class_name=class_name, queue=queue,
                        started_at=at - duration / 1e6, ended_at=at,
                        outcome="retrying" if fails else "success", process=IDENTITY)  # fmt: skip
        outcome = OutcomeRecord(
            kind="retry" if fails else "ack",
            jid=jid,
            class_name=class_name,
            score=at + 60,
            payload=raw.decode() if fails else "",
            history=to_json(run),
            history_per_job=fails,
            sample=RunSample(queue=queue, micros=duration, failed=fails),
        )
        orders.append(SettleOrder(fetched=Fetched(queue=queue, raw=raw), outcome=outcome))
    assert SettleStore(rc).settle_many(IDENTITY, orders, at) == [True] * len(orders)
