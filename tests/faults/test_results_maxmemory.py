"""Kept results on a Redis at its `maxmemory` with a `volatile-lru` eviction policy: Redis
evicts results (and jid index entries, keys with a time to live) before their
`keep_result` is up, never a queued job; `result()` then answers at once that there is no
result, whether the job's jid index went too or outlived its result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults import oracle
from tests.faults.jobs_results import Returns
from tests.support.processes import CogworkerFactory, wait_until
from tests.support.redis_server import RedisServer

APP = "tests.faults.jobs_results:results_config"
#: Five waves of 2,000 jobs each keeping a 500-byte value: about 2 MB of results and jid
#: index entries a wave, more than Redis's room after two, while the queued payloads (which
#: have no time to live, so nothing can evict them) stay at a wave's at most.
WAVES, WAVE = 5, 2_000
VALUE = "x" * 500


@pytest.fixture
def full_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of 8 MB at most, evicting the least recently used keys of those with a
    time to live (`volatile-lru`)."""
    directory = tmp_path / "redis"
    directory.mkdir()
    policy = ("--maxmemory", "8mb", "--maxmemory-policy", "volatile-lru")
    server = RedisServer(directory, extra_args=policy).start()
    yield server
    server.close()


def wait_until_ended(oracle_file: Path, jids: set[str]) -> None:
    """Wait until the oracle saw every job of `jids` end."""
    wait_until(
        lambda: jids <= oracle.finished(oracle_file),
        60,
        interval=0.2,
        message=lambda: f"{len(jids - oracle.finished(oracle_file))} jobs never ended",
    )


def test_results_are_evicted_early_and_no_job_is_lost(
    full_redis: RedisServer, cogworker_factory: CogworkerFactory, tmp_path: Path
) -> None:
    """10,000 jobs keeping a result, in waves, through a worker: each runs once, Redis
    evicts results before their 60 s are up, and `result()` of an evicted one raises
    `ResultNotFoundError` without waiting out its timeout, its jid index there or not."""
    url, oracle_file = full_redis.url, tmp_path / "oracle"
    env = {"COGWORKER_ORACLE": str(oracle_file), "COGWORKER_TEST_REDIS_URL": url}
    worker = cogworker_factory(APP, redis_url=url, env=env)
    client = cogworker.Client(cogworker.Config(redis_url=url))
    inspect = full_redis.client(socket_timeout=10)
    jids: list[str] = []
    for _wave in range(WAVES):
        jids += [str(jid) for jid in client.enqueue_many(Returns, [[VALUE]] * WAVE)]
        wait_until_ended(oracle_file, set(jids))

    starts, _ends = oracle.runs(oracle_file)
    assert len(starts) == WAVES * WAVE
    assert max(starts.values()) == 1, starts.most_common(3)
    assert inspect.llen(keys.queue("default")) == 0
    assert inspect.info("stats")["evicted_keys"] > 0
    evicted = [jid for jid in jids if not inspect.exists(keys.result("default", jid))]
    assert evicted, "no result was evicted: Redis had room for them all"
    outlived = [jid for jid in evicted if inspect.exists(keys.jid_index(jid))]
    for jid in [*evicted[:25], *outlived[:25]]:
        with pytest.raises(cogworker.ResultNotFoundError):
            client.result(jid, timeout=30)
    assert worker.is_running, worker.log_tail()
    assert "Traceback" not in worker.log_text()
    client.close()
    inspect.close()
