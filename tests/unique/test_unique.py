"""Unique jobs on real workers and a real Redis: one at a time, locks owner-checked.

What a worker does with a lock is tested for sync and async job classes (the `kind`
fixture); what a client does is the same for both: the payload doesn't say.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.run import RunStore
from tests.support.async_variants import Kind, of_kind
from tests.support.clients import ClientKind
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.topology_marks import on_both_topologies
from tests.unique import jobs

pytestmark = on_both_topologies

APP = "tests.unique.jobs:config"
StartWorker = Callable[[], CogworkerProcess]


@pytest.fixture
def start_worker(cogworker_factory: CogworkerFactory, redis_url: str) -> StartWorker:
    """Start a worker whose jobs record into the test's Redis."""

    def start() -> CogworkerProcess:
        env = {"COGWORKER_TEST_REDIS_URL": redis_url}
        return cogworker_factory(APP, redis_url=redis_url, env=env)

    return start


def runs(rc: redis.Redis, event: str = "run") -> list[str]:
    """The jids of the recorded events of one kind, in order."""
    return [
        e.decode().split(":")[1]
        for e in rc.lrange("unique:events", 0, -1)
        if e.startswith(event.encode())
    ]


def lock_of(client: cogworker.Client, job_class: type[cogworker.Job], *args: object) -> str:
    """The lock key a job with these arguments takes."""
    record = cogworker.app.client.build_job(job_class, list(args), time.time())  # type: ignore[arg-type]
    lock = record.extra["unique_lock"]
    assert isinstance(lock, str)
    return lock


#: Enqueues of one unique job in one process: 4 threads x 125 (Client), or 500 tasks
#: on one event loop (AsyncClient); prints how many were pushed.
ENQUEUE_SCRIPTS: dict[ClientKind, str] = {
    "Client": textwrap.dedent(
        """
        import sys
        from concurrent.futures import ThreadPoolExecutor
        import cogworker
        from tests.unique.jobs import Report
        client = cogworker.Client(cogworker.Config(redis_url=sys.argv[1]))
        with ThreadPoolExecutor(4) as pool:
            jids = list(pool.map(lambda _: client.enqueue(Report, 7), range(125)))
        print(sum(jid is not None for jid in jids))
        """
    ),
    "AsyncClient": textwrap.dedent(
        """
        import asyncio, sys
        from cogworker import AsyncClient, Config
        from tests.unique.jobs import Report
        async def main():
            async with AsyncClient(Config(redis_url=sys.argv[1])) as client:
                return await asyncio.gather(*(client.enqueue(Report, 7) for _ in range(500)))
        print(sum(jid is not None for jid in asyncio.run(main())))
        """
    ),
}


def test_a_thousand_concurrent_enqueues_push_exactly_one(
    client: cogworker.Client, rc: redis.Redis, redis_url: str, client_kind: ClientKind
) -> None:
    """Threads or tasks in 2 processes enqueue the same unique job 1,000 times, through
    either client: exactly one is pushed."""
    repo = Path(__file__).resolve().parents[2]
    others = [
        subprocess.Popen(
            [sys.executable, "-c", ENQUEUE_SCRIPTS[client_kind], redis_url],
            cwd=repo,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    accepted = [int(process.communicate(timeout=60)[0]) for process in others]
    assert sum(accepted) == 1
    assert rc.llen(keys.queue("default")) == 1
    assert client.enqueue(jobs.Report, 7) is None
    assert client.enqueue(jobs.Report, 8) is not None  # other arguments: another lock


def test_the_lock_goes_when_the_job_succeeds(
    client: cogworker.Client, rc: redis.Redis, start_worker: StartWorker, kind: Kind
) -> None:
    """Duplicates are refused until the job has run; then the next enqueue is accepted."""
    report = of_kind(jobs.Report, kind)
    first = client.enqueue(report, 1)
    assert first is not None
    assert client.enqueue(report, 1) is None
    start_worker()
    wait_until(lambda: runs(rc) == [first], 20)
    wait_until(lambda: client.enqueue(report, 1) is not None, 20)


def test_a_class_supplied_key_decides_what_is_a_duplicate(client: cogworker.Client) -> None:
    """unique_key(args) picks the lock: same account, other note, still a duplicate."""
    assert client.enqueue(jobs.Keyed, 1, "a") is not None
    assert client.enqueue(jobs.Keyed, 1, "b") is None
    assert client.enqueue(jobs.Keyed, 2, "a") is not None


def test_a_retry_longer_than_the_ttl_keeps_the_lock_until_it_runs(
    client: cogworker.Client,
    rc: redis.Redis,
    start_worker: StartWorker,
    tmp_path: Path,
    kind: Kind,
) -> None:
    """The lock is extended through a 3 s retry although its TTL is 1 s; released after."""
    marker = str(tmp_path / "marker")
    slow_retry = of_kind(jobs.SlowRetry, kind)
    # The worker is up before the push: a start slower than the lock's 1 s TTL (a busy
    # machine) would let the lock lapse before the first run, which is not this test.
    start_worker()
    wait_until(lambda: rc.scard(keys.PROCESSES) == 1, 20)
    jid = client.enqueue(slow_retry, marker)
    assert jid is not None
    lock = lock_of(client, slow_retry, marker)
    wait_until(lambda: rc.zcard(keys.retry("default")) == 1, 20)
    assert rc.pttl(lock) > 2000
    wait_until(
        lambda: time.time() - float(rc.lrange("unique:events", 0, 0)[0].split(b":")[2]) > 1.5, 10
    )
    assert client.enqueue(slow_retry, marker) is None  # past its 1 s TTL, still held
    wait_until(lambda: len(runs(rc)) == 2, 20)
    wait_until(lambda: not rc.exists(lock), 10)
    assert client.enqueue(slow_retry, marker) is not None


@pytest.mark.parametrize("how", ["kill", "discard", "dead"])
def test_a_job_ending_for_good_releases_its_lock(
    how: str, client: cogworker.Client, rc: redis.Redis, start_worker: StartWorker, kind: Kind
) -> None:
    """Dead, KILL and DISCARD each let go of the lock."""
    sync_class, args = (jobs.DiesAtOnce, (9,)) if how == "dead" else (jobs.Ends, (how,))
    job_class = of_kind(sync_class, kind)
    assert client.enqueue(job_class, *args) is not None
    lock = lock_of(client, job_class, *args)
    assert rc.exists(lock)
    start_worker()
    wait_until(lambda: not rc.exists(lock), 20)
    assert client.enqueue(job_class, *args) is not None


def test_a_stale_holder_cannot_release_another_jobs_lock(rc: redis.Redis) -> None:
    """Release is owner-checked: only the jid that took the lock lets it go."""
    store = RunStore(rc)
    assert store.take_lock("cogworker:unique:x", "jid-a", 60)
    assert not store.take_lock("cogworker:unique:x", "jid-b", 60)
    assert not store.release_lock("cogworker:unique:x", "jid-b")
    assert rc.get("cogworker:unique:x") == b"jid-a"
    assert store.release_lock("cogworker:unique:x", "jid-a")


def test_until_executing_lets_a_duplicate_in_once_the_job_starts(
    client: cogworker.Client,
    rc: redis.Redis,
    start_worker: StartWorker,
    tmp_path: Path,
    kind: Kind,
) -> None:
    """until_executing: refused while queued, accepted as soon as the first has started."""
    gate = str(tmp_path / "gate")
    starting = of_kind(jobs.Starting, kind)
    first = client.enqueue(starting, gate)
    assert first is not None
    assert client.enqueue(starting, gate) is None
    start_worker()
    wait_until(lambda: runs(rc) == [first], 20)
    wait_until(lambda: client.enqueue(starting, gate) is not None, 10)
    Path(gate).touch()


def test_while_executing_never_runs_two_at_once(
    client: cogworker.Client, rc: redis.Redis, start_worker: StartWorker, kind: Kind
) -> None:
    """Three duplicates on a 4-thread worker (or its event loop) run one after another,
    never overlapping."""
    jids = [client.enqueue(of_kind(jobs.Exclusive, kind), 5) for _ in range(3)]
    assert all(jids)
    start_worker()
    wait_until(lambda: len(runs(rc, "end")) == 3, 30)
    events = [e.decode().split(":") for e in rc.lrange("unique:events", 0, -1)]
    order = [kind for kind, _jid, _at in events]
    assert order == ["start", "end"] * 3


def test_threads_in_one_process_race_for_the_lock_fairly(client: cogworker.Client) -> None:
    """Many threads of one client enqueueing the same job: one jid, the rest None."""
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: client.enqueue(jobs.Report, 42), range(200)))
    assert sum(result is not None for result in results) == 1
