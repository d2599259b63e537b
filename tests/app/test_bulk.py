"""10,000 jobs, 2 worker processes of 10 threads each: every job runs exactly once."""

from __future__ import annotations

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, identities, logs, wait_for_processes
from tests.app.jobs import Count
from tests.support.processes import wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

JOBS = 10_000


def test_ten_thousand_jobs_run_exactly_once_on_two_processes(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """10,000 enqueued jobs each run exactly once across 2 processes of 10 threads."""
    jids = client.enqueue_many(Count, ([number] for number in range(JOBS)))
    assert len(set(jids)) == JOBS
    assert rc.llen(keys.queue("default")) == JOBS

    first = workers.start("tests.app.jobs:bulk_config", concurrency=10)
    second = workers.start("tests.app.jobs:bulk_config", concurrency=10)
    names = wait_for_processes(rc, 2, first, second)

    wait_until(
        lambda: int(rc.get("count:total") or 0) >= JOBS and rc.llen(keys.queue("default")) == 0,
        90.0,
        interval=0.2,
        message=lambda: f"{rc.get('count:total')!r} of {JOBS} ran; logs:\n{logs(first, second)}",
    )
    # Let every ack land: the in-progress lists empty once each job is settled.
    wait_until(
        lambda: all(rc.llen(f"cogworker:{{q:default}}:inprogress:{name}") == 0 for name in names),
        10.0,
        message="in-progress lists never emptied",
    )

    assert rc.scard("count:jids") == JOBS
    assert rc.smembers("count:jids") == {jid.encode() for jid in jids if jid}
    assert int(rc.get("count:total") or 0) == JOBS
    assert rc.llen(keys.queue("default")) == 0
    assert sorted(identities(rc)) == sorted(names)
    assert int(rc.get("cogworker:{q:default}:stat:processed") or 0) == JOBS
    assert rc.zcard("cogworker:{q:default}:retry") == 0
    assert rc.zcard("cogworker:{q:default}:dead") == 0
