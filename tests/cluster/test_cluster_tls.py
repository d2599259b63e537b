"""cogworker over TLS on a real local cluster of its own: a client enqueues over
`rediss+cluster://` as the documented worker ACL user, and `cogworker work` drains the jobs
over TLS, every node speaking TLS to its clients, its peers and its replicas.  The ACL rules
are the ones docs/production-redis.md and docs/redis-cluster.md give, exactly."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.cluster import jobs
from tests.production_redis import drain
from tests.production_redis.servers import Certificates
from tests.production_redis.test_acl import documented_rules
from tests.support.cluster import LocalCluster, tls_url
from tests.support.processes import REPO_ROOT, CogworkerProcess

APP = "tests.cluster.jobs:config"
MIX = drain.Mix(plain=40, retried=4, scheduled=4, dead=2, unique=2)
CRITICAL = 20


def cluster_rules() -> list[str]:
    """The rules docs/redis-cluster.md adds to the worker user on a cluster."""
    text = (REPO_ROOT / "docs" / "redis-cluster.md").read_text()
    line = next(line for line in text.splitlines() if "SETUSER cogworker-worker" in line)
    words = shlex.split(line)
    return words[words.index("SETUSER") + 2 :]


@pytest.fixture
def tls_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """Three primaries with a replica each, speaking TLS, the documented worker user on
    every node (ACL rules are each node's own), with the cluster's two more rules."""
    cluster = LocalCluster(tmp_path / "nodes", tls=Certificates.make(tmp_path / "tls"))
    cluster.start()
    _name, _password, rules = documented_rules()["cogworker-worker"]
    try:
        for node in cluster.nodes:
            with node.client() as admin:
                admin.execute_command("ACL", "SETUSER", "cogworker-worker", *rules)
                admin.execute_command("ACL", "SETUSER", "cogworker-worker", *cluster_rules())
        yield cluster
    finally:
        cluster.close()


def test_a_worker_over_tls_drains_what_a_client_enqueued_over_tls(
    tls_cluster: LocalCluster, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """Plain, retried, scheduled, dead and unique jobs on `default` and plain ones on
    `critical` (two primaries), enqueued and drained over TLS as the worker user: each
    runs, nothing is left waiting, and no node refused the user anything."""
    _name, password, _rules = documented_rules()["cogworker-worker"]
    url = tls_url(tls_cluster, f"cogworker-worker:{password}@")
    client = cogworker.Client(cogworker.Config(redis_url=url))
    drain.enqueue(client, MIX)
    client.enqueue_many(jobs.CriticalDrain, [[-1 - n] for n in range(CRITICAL)])
    client.close()
    both = drain.Mix(MIX.plain + CRITICAL, MIX.retried, MIX.scheduled, MIX.dead, MIX.unique)
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    with CogworkerProcess(["work", APP, "--redis-url", url], directory=tmp_path, env=env) as worker:
        drain.wait_drained(rc, both, worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()
    assert "Traceback" not in worker.log_text()
    assert "liveness pulse failed" not in worker.log_text()  # it too speaks TLS, follows MOVED
    admin = tls_cluster.client()
    for queue in jobs.QUEUES:
        assert admin.llen(keys.queue(queue)) == 0
    assert admin.zcard(keys.dead("default")) == MIX.dead
    admin.close()
    for node in tls_cluster.nodes:
        with node.client() as plain:
            assert plain.acl_log() == [], f"node {node.port} refused the worker user"
