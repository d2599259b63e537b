"""Pausing a queue (`Client.pause`): real worker processes stop taking its jobs, even one
blocked waiting on it, and take them again, each once, after `Client.resume`.

Sync job classes only: a pause is about which queue the fetcher takes from,
never about how a job runs.
"""

from __future__ import annotations

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.async_client import AsyncClient
from tests.app.helpers import (
    Workers,
    queue_payloads,
    runs,
    start_times,
    wait_for_fetches,
    wait_for_processes,
    with_async_client,
)
from tests.app.jobs import Record, RecordHeavy, RecordLight
from tests.support.processes import CogworkerProcess, wait_until


def wait_until_all_ran_once(rc: redis.Redis, jids: list[str], worker: CogworkerProcess) -> None:
    """Wait until each of `jids` ran, then check none ran twice."""
    wait_until(
        lambda: all(runs(rc, jid) >= 1 for jid in jids),
        15.0,
        message=lambda: f"not every job ran; log:\n{worker.log_tail()}",
    )
    assert [runs(rc, jid) for jid in jids] == [1] * len(jids)


@pytest.mark.parametrize("app", ["tests.app.jobs:fast_config", "tests.app.jobs:basic_config"])
def test_a_worker_blocked_on_a_paused_queue_takes_nothing_until_resumed(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, app: str
) -> None:
    """Paused while the worker waits on the queue, then jobs pushed: the wait takes the first
    but hands it back unrun; none runs while paused, every one runs once after resume, in
    the order pushed (reliable and basic fetch)."""
    worker = workers.start(app, concurrency=1)
    [identity] = wait_for_processes(rc, 1, worker)
    wait_until(
        lambda: any("b" in entry["flags"] for entry in rc.client_list()),
        10.0,
        message=lambda: f"the worker never waited on the queue; log:\n{worker.log_tail()}",
    )

    assert client.pause("default") is True
    assert client.pause("default") is False  # already paused
    jids = [jid for jid in client.enqueue_many(Record, [[n] for n in range(5)]) if jid]
    wait_for_fetches(rc, 3, worker)

    assert [runs(rc, jid) for jid in jids] == [0] * 5
    assert [job["jid"] for job in reversed(queue_payloads(rc, "default"))] == jids
    assert rc.llen(keys.in_progress("default", identity)) == 0
    assert client.paused_queues() == {"default"}

    assert client.resume("default") is True
    wait_until_all_ran_once(rc, jids, worker)
    assert sorted(jids, key=lambda jid: start_times(rc, jid)[0]) == jids
    assert client.paused_queues() == frozenset()


@pytest.mark.parametrize("queues", [("heavy", "light"), ("heavy,3", "light,1")], ids=str)
def test_pausing_one_of_two_queues_drains_only_the_other(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, queues: tuple[str, str]
) -> None:
    """Both queues hold jobs and one is paused: the other drains, the paused one keeps all of
    its jobs until resumed, then they run once each (strict and weighted orders)."""
    client.pause("heavy")
    heavy = [jid for jid in client.enqueue_many(RecordHeavy, [[n] for n in range(10)]) if jid]
    light = [jid for jid in client.enqueue_many(RecordLight, [[n] for n in range(10)]) if jid]
    worker = workers.start(concurrency=2, queues=queues)
    wait_for_processes(rc, 1, worker)

    wait_until_all_ran_once(rc, light, worker)
    wait_for_fetches(rc, 3, worker)
    assert [runs(rc, jid) for jid in heavy] == [0] * 10
    assert rc.llen(keys.queue("heavy")) == 10

    client.resume("heavy")
    wait_until_all_ran_once(rc, heavy, worker)


def test_enqueues_land_on_a_paused_queue(rc: redis.Redis, client: cogworker.Client) -> None:
    """A pause leaves enqueueing alone: one job and many at once land on the queue."""
    client.pause("default")
    client.enqueue(Record, 1)
    client.enqueue_many(Record, [[2], [3]])
    assert rc.llen(keys.queue("default")) == 3
    assert rc.sismember(keys.QUEUES, "default")


def test_pause_refuses_a_name_no_queue_can_have(client: cogworker.Client) -> None:
    """A name that breaks the queue-name rule is a ValueError naming the rule."""
    with pytest.raises(ValueError, match="a queue name is"):
        client.pause("a,b")
    with pytest.raises(ValueError, match="a queue name is"):
        client.resume("")


def test_the_async_client_pauses_and_resumes(
    client: cogworker.Client, client_config: cogworker.Config
) -> None:
    """`AsyncClient.pause` / `resume` / `paused_queues` act on the same set as `Client`'s."""

    async def pause_two(async_client: AsyncClient) -> list[bool]:
        return [await async_client.pause("a"), await async_client.pause("b")]

    assert with_async_client(client_config, pause_two) == [True, True]
    assert client.paused_queues() == {"a", "b"}
    client.resume("a")

    async def read_then_resume(async_client: AsyncClient) -> tuple[frozenset[str], bool, bool]:
        seen = await async_client.paused_queues()
        return seen, await async_client.resume("b"), await async_client.resume("b")

    assert with_async_client(client_config, read_then_resume) == ({"b"}, True, False)
    assert client.paused_queues() == frozenset()


#: What a fetcher spinning on a paused queue would send: a wait that returns a job at once
#: (BLMOVE, BRPOP), a move (LMOVE, RPOP, in the fetch scripts too), a put-back (RPUSH).
SPIN_COMMANDS = ("blmove", "brpop", "lmove", "rpop", "rpush")


def command_calls(rc: redis.Redis) -> dict[str, int]:
    """How many times Redis has run each command, scripts' own calls included."""
    stats = rc.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(stat["calls"]) for name, stat in stats.items()}


@pytest.mark.parametrize("app", ["tests.app.jobs:fast_config", "tests.app.jobs:basic_config"])
def test_a_worker_whose_only_queue_is_paused_with_jobs_waiting_does_not_spin(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, app: str
) -> None:
    """Its one queue paused and holding jobs: over ten fetches the worker only reads the
    flag (the fetch script); it never waits on the queue (which would hand it a job at
    once) nor moves a job to put it back (reliable and basic fetch)."""
    client.pause("default")
    jids = [jid for jid in client.enqueue_many(Record, [[n] for n in range(3)]) if jid]
    worker = workers.start(app, concurrency=1)
    [identity] = wait_for_processes(rc, 1, worker)
    wait_for_fetches(rc, 1, worker)

    before = command_calls(rc)
    wait_for_fetches(rc, 10, worker)
    after = command_calls(rc)

    spins = {name: after.get(name, 0) - before.get(name, 0) for name in SPIN_COMMANDS}
    assert spins == dict.fromkeys(SPIN_COMMANDS, 0)
    assert [job["jid"] for job in reversed(queue_payloads(rc, "default"))] == jids
    assert rc.llen(keys.in_progress("default", identity)) == 0
    client.resume("default")
    wait_until_all_ran_once(rc, jids, worker)
