"""cogworker on the real local cluster: a client enqueues, `cogworker work` drains two queues
whose slots live on different primaries, and every job runs exactly once."""

from __future__ import annotations

from pathlib import Path

import redis

import cogworker
from tests.cluster import jobs
from tests.faults import oracle
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.support.clients import EitherClient
from tests.support.cluster import LocalCluster
from tests.support.processes import CogworkerProcess, wait_until

APP = "tests.cluster.jobs:config"
MIX = drain.Mix(plain=150, retried=10, scheduled=10, dead=3, unique=2)


def cluster_url(cluster: LocalCluster) -> str:
    """A redis+cluster:// URL naming two of the cluster's nodes."""
    nodes = ",".join(f"{host}:{port}" for host, port in cluster.addresses[:2])
    return f"redis+cluster://{nodes}/0"


def enqueue_both(client: EitherClient) -> None:
    """The drain's mix on `default`, and the same on `critical`."""
    drain.enqueue(client, MIX)
    client.enqueue_many(jobs.CriticalDrain, [[n] for n in range(MIX.plain)])
    client.enqueue_many(jobs.CriticalFailsOnce, [[n] for n in range(MIX.retried)])
    for n in range(MIX.scheduled):
        client.enqueue_in(1.0, jobs.CriticalDrain, MIX.plain + n)
    client.enqueue_many(jobs.CriticalDies, [[n] for n in range(MIX.dead)])
    for n in range(MIX.unique):
        assert client.enqueue(jobs.CriticalUnique, f"key-{n}") is not None
        assert client.enqueue(jobs.CriticalUnique, f"key-{n}") is None


def twice(mix: drain.Mix) -> drain.Mix:
    """`mix` on both queues."""
    counts = (mix.plain, mix.retried, mix.scheduled, mix.dead, mix.unique)
    return drain.Mix(*(2 * count for count in counts))


def assert_each_ran_once(rc: redis.Redis, cluster_client: redis.RedisCluster) -> None:
    """Each job of the drain ran once (a retried one twice), the dead are in their queue's
    dead set, and nothing is left over."""
    assert all(count == 1 for count in drain.runs(rc, "drain").values())
    assert all(count == 2 for count in drain.runs(rc, "fails_once").values())
    for queue in jobs.QUEUES:
        assert cluster_client.zcard(f"cogworker:{{q:{queue}}}:dead") == MIX.dead
        assert cluster_client.llen(f"cogworker:{{q:{queue}}}:queue") == 0
        assert cluster_client.zcard(f"cogworker:{{q:{queue}}}:schedule") == 0
        assert cluster_client.zcard(f"cogworker:{{q:{queue}}}:retry") == 0
    oracle.assert_nothing_left_behind(cluster_client)


def test_a_worker_drains_two_queues_on_two_primaries_each_job_once(
    local_cluster: LocalCluster,
    cluster_client: redis.RedisCluster,
    rc: redis.Redis,
    redis_url: str,
    tmp_path: Path,
) -> None:
    """Plain, retried, scheduled, dead and unique jobs on both queues: each runs once (a
    retried one twice), the dead land in their queue's dead set, nothing is left over; a
    kept result and a status are read, a batch of both queues fires its callback."""
    url = cluster_url(local_cluster)
    client = cogworker.Client(cogworker.Config(redis_url=url, track_status=True))
    enqueue_both(client)
    doubled = client.enqueue(jobs.Doubles, 21)
    with client.batch(on_success=jobs.BatchDone) as batch:
        batch.enqueue(jobs.CriticalDrain, -1)
        batch.enqueue(Drain, -2)
    command = ["work", APP, "--redis-url", url, "--processes", "2"]
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    with CogworkerProcess(command, directory=tmp_path, env=env) as supervisor:
        drain.wait_drained(rc, twice(MIX), supervisor)
        assert doubled is not None
        assert client.result(doubled, timeout=30) == 42
        assert client.status(doubled) == "complete"
        wait_until(lambda: rc.hlen("runs:batch_done") == 1, 30, message=supervisor.log_tail)
        assert supervisor.terminate(60.0) == 0, supervisor.log_tail()
    assert "Traceback" not in supervisor.log_text()
    assert_each_ran_once(rc, cluster_client)
    client.close()
