"""A failover in the middle of a drain: kill -9 the primary; the workers, the dashboard and
the client carry on against the promoted replica by themselves.

Asserted: what is guaranteed without `min_replicas` (every job whose enqueue had reached
the replica runs to success at least once; no process is restarted).  Measured, not
asserted (printed, for docs/production-redis.md): how long the failover took, and how
many jobs ran twice.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import redis

import cogworker
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.production_redis.servers import SentinelTopology
from tests.support.processes import CogworkerProcess, wait_until
from tests.web.helpers import serving

APP = "tests.production_redis.jobs:config"
#: Two threads a worker: the drain takes a few seconds, so the kill falls in its middle.
WORK = ["work", APP, "--concurrency", "2"]
MIX = drain.Mix(plain=3000, retried=300, scheduled=300, dead=0, unique=0)
#: The primary is killed once this share of the plain jobs has run.
KILL_AFTER = MIX.plain // 3


def done(side_effects: redis.Redis) -> int:
    """Plain and scheduled jobs that have run (at least once)."""
    return int(side_effects.hlen("runs:drain"))


def registered(topology: SentinelTopology) -> int:
    """How many worker processes are registered on the primary."""
    with redis.Redis(port=topology.primary_port() or 1, socket_timeout=2.0) as primary:
        return int(primary.scard("cogworker:processes"))


def settled(topology: SentinelTopology) -> bool:
    """Whether the primary holds no job waiting: queue, schedule and retry set all empty."""
    port = topology.primary_port()
    if port is None:
        return False
    with redis.Redis(port=port, socket_timeout=2.0) as primary:
        waiting = primary.llen("cogworker:queue:default")
        return waiting + primary.zcard("cogworker:schedule") + primary.zcard("cogworker:retry") == 0


def test_workers_and_the_dashboard_carry_on_after_the_primary_is_killed(
    sentinel_topology: SentinelTopology, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """Kill -9 the primary a third into a drain of plain, retried and scheduled jobs: no
    restart, every job runs to success at least once; the losses are measured."""
    url = sentinel_topology.url()
    client = cogworker.Client(cogworker.Config(redis_url=url))
    drain.enqueue(client, MIX, schedule_in=2.0)
    with sentinel_topology.primary.client() as primary:
        assert primary.wait(1, 10_000) == 1  # the replica has every enqueue
    env = {"COGWORKER_TEST_REDIS_URL": redis_url, "COGWORKER_WORK_REDIS_URL": url}
    workers = [
        CogworkerProcess(WORK, directory=tmp_path, env=env, name=f"worker-{n}").start()
        for n in range(2)
    ]
    try:
        with serving(tmp_path, "--redis-url", url) as dashboard:
            wait_until(lambda: done(rc) >= KILL_AFTER, 60.0, message=workers[0].log_tail)
            old_primary = sentinel_topology.primary.port
            killed_at, done_at_kill = time.monotonic(), done(rc)
            sentinel_topology.primary.kill()
            wait_until(lambda: sentinel_topology.primary_port() not in (None, old_primary), 30.0)
            promoted_after = time.monotonic() - killed_at

            wait_until(lambda: done(rc) > done_at_kill + 100, 60.0, message=workers[0].log_tail)
            resumed_after = time.monotonic() - killed_at
            wait_until(
                lambda: httpx.get(dashboard + "/api/stats", timeout=5).status_code == 200,
                30.0,
                ignore=(httpx.HTTPError,),
            )
            # Its kept connection died with the primary: that call fails, the next reconnects.
            late = wait_until(
                lambda: client.enqueue(Drain, -1, jid="late-1"),
                30.0,
                ignore=(cogworker.RedisUnavailableError,),
            )
            wait_until(lambda: settled(sentinel_topology), 60.0, message=workers[0].log_tail)
        assert all(worker.is_running for worker in workers)
        # Jobs whose acknowledgement the old primary took to its grave wait on their
        # worker's in-progress list: a stop hands them back, a fresh worker runs them.
        for worker in workers:
            assert worker.terminate(30.0) == 0, worker.log_tail()
        with CogworkerProcess(WORK, directory=tmp_path, env=env) as last:
            wait_until(lambda: registered(sentinel_topology), 30.0, message=last.log_tail)
            drain.wait_drained(rc, MIX, last)
            wait_until(lambda: late in drain.runs(rc, "drain"), 30.0, message=last.log_tail)
            assert last.terminate(30.0) == 0, last.log_tail()
    finally:
        client.close()
        for worker in workers:
            worker.close()
    _report(rc, done_at_kill, promoted_after, resumed_after)


def _report(
    side_effects: redis.Redis, done_at_kill: int, promoted_after: float, resumed_after: float
) -> None:
    """Print what a failover cost this run (pytest -s shows it)."""
    plain = drain.runs(side_effects, "drain")
    retried = drain.runs(side_effects, "fails_once:done")
    twice = sum(count > 1 for count in plain.values()) + sum(c > 1 for c in retried.values())
    print(
        f"\nfailover: {len(plain) - 1 + len(retried)} jobs done, {done_at_kill} before the "
        f"kill; replica promoted {promoted_after:.1f}s after kill -9, 100 more jobs done "
        f"{resumed_after:.1f}s after the kill; "
        f"{twice} jobs ran to success more than once; 0 lost"
    )
