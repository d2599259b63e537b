"""Topology faults on a Redis Cluster of the test's own.  Mid-drain, a primary killed and
failed over to its replica, and every node stopped and started again: two `cogworker work`
processes drain 5,000 oracle jobs of two queues on two primaries through either, and live.
And on a one-node cluster: what each way of sending commands raises once no node answers,
and a pipeline whose connection drops sending nothing again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.exceptions import RedisClusterUnreachableError

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.connection import connect
from cogworker.adapters.redis_access import PROBE
from cogworker.adapters.redis_client import RedisClient
from tests.cluster.test_cluster_drain import cluster_url
from tests.faults import oracle
from tests.faults.conftest import stop_all
from tests.support.cluster import LocalCluster
from tests.support.cluster_failover import (
    CountCritical,
    CountDefault,
    primary_of,
    restart_every_node,
    wait_until_drained,
    wait_until_replicated,
)
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer

APP = "tests.support.cluster_failover:config"
JOBS_PER_QUEUE = 2_500
#: Jobs ended before the fault: well into `critical` (served first), far from its end.
ENDED_BEFORE_THE_FAULT = 1_000
DRAIN_TIMEOUT = 90.0
#: A key of `default`'s slot.
COUNTER = "cogworker:{q:default}:probe"


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """Three primaries with a replica each, this test's own (its nodes get killed)."""
    cluster = LocalCluster(tmp_path / "cluster").start()
    yield cluster
    cluster.close()


def enqueue_both(url: str) -> tuple[list[str], list[str]]:
    """`JOBS_PER_QUEUE` jobs on `critical`, as many on `default`: their jids."""
    client = cogworker.Client(cogworker.Config(redis_url=url))
    try:
        numbers = [[n] for n in range(JOBS_PER_QUEUE)]
        pushed = (client.enqueue_many(kind, numbers) for kind in (CountCritical, CountDefault))
        critical, default = ([jid for jid in jids if jid is not None] for jids in pushed)
    finally:
        client.close()
    assert len(critical) == len(default) == JOBS_PER_QUEUE
    return critical, default


def start_two_workers(
    factory: CogworkerFactory, url: str, oracle_file: Path
) -> list[CogworkerProcess]:
    """Two workers of both queues, noting their runs in `oracle_file`."""
    env = {"COGWORKER_ORACLE": str(oracle_file)}
    return [factory(APP, redis_url=url, env=env) for _ in range(2)]


def wait_until_mid_drain(oracle_file: Path, critical: list[str]) -> None:
    """Wait until `ENDED_BEFORE_THE_FAULT` jobs ended, checking `critical` isn't done."""
    wait_until(
        lambda: len(oracle.finished(oracle_file)) >= ENDED_BEFORE_THE_FAULT,
        60,
        interval=0.05,
        message="the drain never got going",
    )
    assert not set(critical) <= oracle.finished(oracle_file), "critical drained before the fault"


def assert_alive_and_well(workers: list[CogworkerProcess]) -> None:
    """Every worker still runs, and every failure it logged was a Redis error its loop backs
    off on: none an internal error (a traceback), as an error of redis-py's cluster client
    that isn't a `redis.RedisError` would be."""
    for worker in workers:
        assert worker.is_running, f"a worker died (exit {worker.returncode}):\n{worker.log_tail()}"
        log = worker.log_text()
        assert "internal-error" not in log, log
        assert "Traceback" not in log, log


@pytest.mark.solo
def test_a_primary_killed_mid_drain_fails_over_and_every_job_ends(
    own_cluster: LocalCluster, cogworker_factory: CogworkerFactory, tmp_path: Path
) -> None:
    """kill -9 of `critical`'s primary (its replica holds every push): the replica is
    promoted, both workers live through it, every job ends (0 lost) and nothing is left
    anywhere; a job run twice is one of `critical`'s started before the promotion, whose
    fetch or settlement the failover lost: none fetched from the promoted replica."""
    url, oracle_file = cluster_url(own_cluster), tmp_path / "oracle"
    critical, default = enqueue_both(url)
    victim = primary_of(own_cluster, keys.queue("critical"))
    assert victim is not primary_of(own_cluster, keys.queue("default"))
    wait_until_replicated(own_cluster)  # no push lost: every job is on the replica
    workers = start_two_workers(cogworker_factory, url, oracle_file)
    wait_until_mid_drain(oracle_file, critical)

    victim.kill()
    own_cluster.wait_until_ok()  # the replica promoted
    assert primary_of(own_cluster, keys.queue("critical")) is not victim
    started_by_the_promotion = set(oracle.runs(oracle_file)[0])
    wait_until_drained(own_cluster, oracle_file, critical + default, DRAIN_TIMEOUT)
    assert_alive_and_well(workers)
    stop_all(*workers)

    starts, _ends = oracle.runs(oracle_file)
    again = {jid for jid, count in starts.items() if count > 1}
    assert again <= set(critical), f"runs twice on the primary that lived: {again - set(critical)}"
    late = again - started_by_the_promotion
    assert not late, f"runs twice, fetched from the promoted replica: {late}"
    assert max(starts.values()) <= 2, starts.most_common(3)
    with own_cluster.client() as inspect:
        oracle.assert_each_in_one_place(inspect, critical + default, done=set(critical + default))
        oracle.assert_nothing_left_behind(inspect)


@pytest.mark.solo
def test_every_node_stopped_and_started_mid_drain_and_every_job_ends_once(
    own_cluster: LocalCluster, cogworker_factory: CogworkerFactory, tmp_path: Path
) -> None:
    """Every node stopped cleanly (each saves its data) and started again: while none
    answers, the workers' commands fail with "cluster unreachable", raised as connection
    errors; both workers live through it and every job ends exactly once."""
    url, oracle_file = cluster_url(own_cluster), tmp_path / "oracle"
    critical, default = enqueue_both(url)
    workers = start_two_workers(cogworker_factory, url, oracle_file)
    wait_until_mid_drain(oracle_file, critical)

    restart_every_node(own_cluster, workers)
    wait_until_drained(own_cluster, oracle_file, critical + default, DRAIN_TIMEOUT)
    assert_alive_and_well(workers)
    stop_all(*workers)

    starts, _ends = oracle.runs(oracle_file)
    assert starts.most_common(1)[0][1] == 1, starts.most_common(3)
    with own_cluster.client() as inspect:
        oracle.assert_each_in_one_place(inspect, critical + default, done=set(critical + default))
        oracle.assert_nothing_left_behind(inspect)


def cluster_client(node: RedisServer) -> RedisClient:
    """The connection factory's client of the one-node cluster `node`."""
    return connect(
        cogworker.Config(redis_url=f"redis+cluster://127.0.0.1:{node.port}/0").redis_target()
    )


def test_a_cluster_no_node_of_which_answers_raises_connection_errors(own_node: RedisServer) -> None:
    """A command, a script and a pipeline each raise `redis.ConnectionError` once the
    cluster's only node is gone, also when redis-py's cluster client finds the cluster
    unreachable (a refresh reached no node); a `Client` made then raises
    `RedisUnavailableError`, as its enqueue would on one server."""
    client = cluster_client(own_node)
    assert client.set(COUNTER, 1)
    own_node.stop()
    sends: list[Callable[[], Any]] = [
        lambda: client.get(COUNTER),
        lambda: PROBE(client, (keys.no_lock("default"),), ()),
        lambda: client.pipeline(transaction=False).get(COUNTER).execute(),
    ]
    for send in sends:
        wait_until(lambda send=send: _found_unreachable(send), 10, interval=0.05)
    with pytest.raises(cogworker.RedisUnavailableError, match="Redis is unavailable"):
        cogworker.Client(cogworker.Config(redis_url=f"redis+cluster://127.0.0.1:{own_node.port}"))
    client.close()


def test_a_pipeline_whose_node_dropped_its_connection_sends_nothing_again(
    own_node: RedisServer,
) -> None:
    """The node closes the connection after an INCR ran and before the pipeline's last reply:
    the pipeline raises the connection error (whatever `raise_on_error` says) and sends
    none of its commands again (redis-py's would, the INCR too)."""
    client = cluster_client(own_node)
    node = client.get_node_from_key(COUNTER)
    pipe = client.pipeline(transaction=False)
    pipe.incr(COUNTER)
    # Killing itself, a connection gets this reply, then is closed: the PING gets none.
    pipe.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no", target_nodes=node)
    pipe.execute_command("PING", target_nodes=node)
    with pytest.raises(redis.ConnectionError):
        pipe.execute(raise_on_error=False)
    assert client.get(COUNTER) == b"1"
    client.close()


def _found_unreachable(send: Callable[[], Any]) -> bool:
    """Whether `send` raised a connection error for a cluster found unreachable; an error of
    another type is raised."""
    with pytest.raises(redis.ConnectionError) as raised:
        send()
    return isinstance(raised.value.__cause__, RedisClusterUnreachableError)
