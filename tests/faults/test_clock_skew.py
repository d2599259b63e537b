"""Due times are Redis's: a worker whose clock is 120 s off runs scheduled jobs and retries
on time.

The worker runs under libfaketime (tests/support/skewed_clock.py), so its
wall clock really is off, as on a host whose clock drifted; Redis and the
test keep the true time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import redis

import cogworker
from tests.faults.conftest import registered, stop_all
from tests.faults.jobs_clock import RETRY_DELAY, FailsOnce, Stamp
from tests.support.processes import (
    CogworkerFactory,
    CogworkerProcess,
    child_environment,
    wait_until,
)
from tests.support.redis_server import RedisServer
from tests.support.skewed_clock import build_shim, skewed_environment

APP = "tests.app.jobs:fast_config"
#: How long after its enqueue a scheduled job is due.
DELAY = 6.0


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The monotonic-sleep shim preloaded with libfaketime, compiled once."""
    return build_shim(tmp_path_factory.mktemp("shim"))


def skewed_worker(
    cogworker_factory: CogworkerFactory,
    server: RedisServer,
    oracle_file: Path,
    shim: Path,
    skew: str,
) -> CogworkerProcess:
    """A worker on the test's Redis whose wall clock is `skew` (like "+120s") off."""
    env = {
        "COGWORKER_ORACLE": str(oracle_file),
        "COGWORKER_TEST_REDIS_URL": server.url,
        **skewed_environment(skew, shim),
    }
    return cogworker_factory(APP, redis_url=server.url, env=env)


def stamp_of(inspect: redis.Redis, jid: str, event: str) -> float | None:
    """When a run recorded `event`, by Redis's clock (None: not yet)."""
    value = inspect.hget(f"clock:{jid}", event)
    return None if value is None else float(value)


def redis_now(inspect: redis.Redis) -> float:
    """Redis's clock."""
    seconds, microseconds = inspect.time()
    return seconds + microseconds / 1e6


@pytest.mark.parametrize("skew", ["+120s", "-120s"])
def test_a_scheduled_job_runs_when_due_by_redis_time(
    cogworker_factory: CogworkerFactory,
    server: RedisServer,
    oracle_file: Path,
    shim: Path,
    client: cogworker.Client,
    inspect: redis.Redis,
    skew: str,
) -> None:
    """perform_in(6) on a worker 120 s ahead doesn't run at once, nor 120 s late behind."""
    worker = skewed_worker(cogworker_factory, server, oracle_file, shim, skew)
    registered(inspect, 1)
    enqueued_at = redis_now(inspect)
    jid = client.enqueue_in(DELAY, Stamp)
    assert jid is not None

    ran = wait_until(lambda: stamp_of(inspect, jid, "ran"), 60, message=worker.log_tail)

    assert ran >= enqueued_at + DELAY - 0.5, f"ran {ran - enqueued_at:.1f}s after its enqueue"
    stop_all(worker)


def test_a_retry_filed_by_a_worker_whose_clock_is_behind_waits_its_delay(
    cogworker_factory: CogworkerFactory,
    server: RedisServer,
    oracle_file: Path,
    shim: Path,
    client: cogworker.Client,
    inspect: redis.Redis,
) -> None:
    """A worker 120 s behind files a retry due in 6 s by Redis's clock (not 114 s ago), so
    another worker's poller, its clock true, doesn't hand it back at once."""
    behind = skewed_worker(cogworker_factory, server, oracle_file, shim, "-120s")
    env = {"COGWORKER_ORACLE": str(oracle_file), "COGWORKER_TEST_REDIS_URL": server.url}
    # Serves another queue: it only polls, moving due retries back to "default".
    true_clock = cogworker_factory(APP, redis_url=server.url, env=env, queues=["elsewhere"])
    registered(inspect, 2)
    jid = client.enqueue(FailsOnce)
    assert jid is not None

    retried = wait_until(lambda: stamp_of(inspect, jid, "retried"), 60, message=behind.log_tail)

    failed = stamp_of(inspect, jid, "failed")
    assert failed is not None
    assert retried >= failed + RETRY_DELAY - 0.5, f"retried {retried - failed:.1f}s after failing"
    stop_all(behind, true_clock)


#: A client process's enqueue_in(DELAY, Stamp), through either client.
ENQUEUE_IN_SCRIPTS = {
    "Client": (
        "import sys, cogworker\n"
        "from tests.faults.jobs_clock import Stamp\n"
        "client = cogworker.Client(cogworker.Config(redis_url=sys.argv[1]))\n"
        f"print(client.enqueue_in({DELAY}, Stamp))\n"
    ),
    "AsyncClient": (
        "import asyncio, sys, cogworker\n"
        "from tests.faults.jobs_clock import Stamp\n"
        "async def main():\n"
        "    async with cogworker.AsyncClient(cogworker.Config(redis_url=sys.argv[1])) as c:\n"
        f"        return await c.enqueue_in({DELAY}, Stamp)\n"
        "print(asyncio.run(main()))\n"
    ),
}


@pytest.mark.parametrize("kind", sorted(ENQUEUE_IN_SCRIPTS))
def test_enqueue_in_on_a_host_whose_clock_is_ahead_is_due_by_redis_time(
    server: RedisServer, shim: Path, inspect: redis.Redis, tmp_path: Path, kind: str
) -> None:
    """A client process 120 s ahead schedules enqueue_in(6) at Redis's now + 6, not + 126,
    through either client."""
    script = ENQUEUE_IN_SCRIPTS[kind]
    before = redis_now(inspect)
    done = subprocess.run(
        [sys.executable, "-c", script, server.url],
        env=child_environment(skewed_environment("+120s", shim)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    after = redis_now(inspect)

    [(_entry, due)] = inspect.zrange("cogworker:{q:default}:schedule", 0, -1, withscores=True)
    assert before + DELAY - 0.5 <= due <= after + DELAY + 0.5, done.stdout
