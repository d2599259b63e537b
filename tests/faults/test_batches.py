"""A batch's callbacks fire exactly once while workers are killed and Redis restarts.

Each round enqueues a batch of 1,000 members (some fail once then succeed,
some die) and a small one of members that only fail once, then kills -9 a
member worker mid-batch, kills -9 Redis (append-only, fsync always) and
starts it again, and kills -9 another worker; replacements keep the
batches draining.  The callbacks run on a worker of their own, never
killed, so each run counted is a push.  `COGWORKER_BATCH_ROUNDS` sets the
rounds (2 by default; the issue's 20 on demand).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.domain.batches import BatchStatus
from tests.faults.conftest import StartWorker, registered, stop_all
from tests.faults.jobs_batches import Member, OnComplete, OnSuccess
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer

APP = "tests.faults.jobs_batches:config"
ROUNDS = int(os.environ.get("COGWORKER_BATCH_ROUNDS", "2"))
MEMBERS = 1_000


def _fill(client: cogworker.Client, label: str, fates: list[str]) -> str:
    with client.batch(on_success=OnSuccess, on_complete=OnComplete, args=[label]) as batch:
        batch.enqueue_many(Member, list(enumerate(fates)))
    return batch.bid


def _status(client: cogworker.Client, bid: str) -> BatchStatus | None:
    """The batch's status, or None while Redis is away."""
    try:
        return client.batch_status(bid)
    except cogworker.RedisUnavailableError:
        return None


def _settled(client: cogworker.Client, bid: str) -> int:
    status = _status(client, bid)
    return 0 if status is None else status.settled


def _fired(inspect: redis.Redis, callback: str, bid: str) -> int:
    return int(inspect.get(f"fired:{callback}:{bid}") or 0)


def _replace(members: list[CogworkerProcess], start_worker: StartWorker) -> None:
    """kill -9 the oldest member worker and start another."""
    members.pop(0).kill()
    members.append(start_worker(APP, queues=["batch"]))


def _retry_now(inspect: redis.Redis) -> None:
    """The dashboard's Retry now for every job waiting to retry: a failure whose write met
    Redis's restart waits `INTERRUPT_DELAY` (30 s) by design, which this test needn't."""
    entries = inspect.zrange(keys.retry("default"), 0, -1)
    moves = [(entry, json.loads(entry)["queue"], entry.decode()) for entry in entries]
    SetStore(inspect, Retention()).requeue(keys.retry("default"), moves)


def _finished(client: cogworker.Client, inspect: redis.Redis, bid: str) -> bool:
    """Whether on_complete ran and the batch noted every callback it pushed (jobs waiting to
    retry are retried now meanwhile)."""
    try:
        _retry_now(inspect)
    except redis.ConnectionError:
        return False
    status = _status(client, bid)
    if status is None or _fired(inspect, "complete", bid) == 0:
        return False
    return status.fired == ({"complete", "success"} if status.success else {"complete"})


def test_callbacks_fire_exactly_once_through_kills_and_a_redis_restart(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, server: RedisServer
) -> None:
    """Every round: on_complete once per batch, on_success once exactly for a batch whose
    members all succeeded, whatever was killed when."""
    rng = random.Random(24)
    callbacks = start_worker(APP, queues=["callbacks"], concurrency=2)
    members = [start_worker(APP, queues=["batch"]) for _ in range(2)]
    registered(inspect, 3)
    every: list[str] = []
    for round_no in range(ROUNDS):
        fates = rng.choices(["ok", "flaky", "die"], weights=[85, 10, 5], k=MEMBERS)
        big = _fill(client, f"big{round_no}", fates)
        small = _fill(client, f"small{round_no}", ["flaky"] * 20)
        every += (big, small)
        steps: list[Callable[[], None]] = [
            lambda: _replace(members, start_worker),
            lambda: (server.kill(), server.start()),
            lambda: _replace(members, start_worker),
        ]
        for step, settled in zip(steps, (250, 500, 750), strict=True):
            wait_until(
                lambda at=settled, bid=big: _settled(client, bid) >= at,
                60,
                message=members[-1].log_tail,
            )
            step()
        for bid in (big, small):
            wait_until(
                lambda bid=bid: _finished(client, inspect, bid),
                120,
                message=lambda: members[-1].log_tail() + callbacks.log_tail(),
            )
            status = _status(client, bid)
            assert status is not None
            assert status.complete
            assert status.total == status.settled == (MEMBERS if bid == big else 20)
            assert status.failed >= (fates.count("die") if bid == big else 0)
            assert status.fired == ({"complete", "success"} if status.success else {"complete"})
    stop_all(*members, callbacks)
    for bid in every:
        status = client.batch_status(bid)
        assert status is not None
        assert _fired(inspect, "complete", bid) == 1
        assert _fired(inspect, "success", bid) == (1 if status.success else 0)
    assert (
        inspect.llen(keys.batch_events("batch"))
        == inspect.llen(keys.batch_events("callbacks"))
        == 0
    )
