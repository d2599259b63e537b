"""Recovery and the liveness pulse on the real local cluster: a worker killed with jobs of two
queues (on two primaries) running is recovered by another, and a pulse reaches the node
owning its process's slot, past a first start-up node that doesn't answer."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.worker import pulse
from tests.cluster.test_cluster_drain import cluster_url
from tests.faults import oracle
from tests.faults.conftest import starts_of, stop_all
from tests.faults.jobs_queues import QUEUES, SleepHigh, SleepLow
from tests.support.cluster import LocalCluster
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.redis_server import HOST, free_port

APP = "tests.faults.jobs_queues:config"


def test_a_killed_worker_s_jobs_on_two_primaries_are_recovered_by_another(
    local_cluster: LocalCluster,
    cluster_client: redis.RedisCluster,
    cogworker_factory: CogworkerFactory,
    redis_url: str,
    tmp_path: Path,
) -> None:
    """kill -9 with two jobs of each queue running: the survivor's reconciler judges the
    victim gone in its process's slot, requeues each queue's list in that queue's slot;
    each job runs again and ends; no list, set or process is left."""
    url = cluster_url(local_cluster)
    oracle_file = tmp_path / "oracle"
    env = {"COGWORKER_ORACLE": str(oracle_file), "COGWORKER_TEST_REDIS_URL": redis_url}

    def start() -> CogworkerProcess:
        return cogworker_factory(APP, redis_url=url, env=env)

    victim = start()
    wait_until(lambda: cluster_client.scard(keys.PROCESSES) == 1, 20, message=victim.log_tail)
    [identity] = [member.decode() for member in cluster_client.smembers(keys.PROCESSES)]
    client = cogworker.Client(cogworker.Config(redis_url=url))
    jids = [
        jid
        for job in (SleepHigh, SleepLow)
        for jid in (client.enqueue(job, 4.0), client.enqueue(job, 4.0))
        if jid is not None
    ]
    assert len(jids) == 4
    wait_until(
        lambda: all(starts_of(oracle_file, jid) == 1 for jid in jids), 20, message=victim.log_tail
    )
    for queue in QUEUES:
        assert cluster_client.llen(keys.in_progress(queue, identity)) == 2

    survivor = start()
    wait_until(lambda: cluster_client.scard(keys.PROCESSES) == 2, 20, message=survivor.log_tail)
    victim.kill()
    wait_until(lambda: set(jids) <= oracle.finished(oracle_file), 40, message=survivor.log_tail)

    stop_all(survivor)
    client.close()
    assert all(oracle.runs(oracle_file)[0][jid] == 2 for jid in jids)
    assert not cluster_client.exists(keys.process_queues(identity))
    oracle.assert_each_in_one_place(cluster_client, jids, done=set(jids))
    oracle.assert_nothing_left_behind(cluster_client)


def test_the_pulse_beats_on_the_primary_owning_its_process_s_slot(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Given one start-up node, the pulse of a process whose `{p:P}` slot another primary
    owns follows the MOVED reply there and stamps a late beat."""
    seed_host, seed_port = local_cluster.addresses[0]
    seed = cluster_client.get_node(host=seed_host, port=seed_port)
    identity = next(
        f"host:{n}:pulse"
        for n in range(1000)
        if cluster_client.get_node_from_key(keys.process(f"host:{n}:pulse")) != seed
    )
    assert_the_pulse_beats(
        cluster_client, identity, redis_url=f"redis://{seed_host}:{seed_port}/0", redis_cluster=True
    )


def test_the_pulse_starts_at_the_next_start_up_node_when_the_first_doesn_t_answer(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """A cluster URL whose first node is a closed port: the pulse tries the next one, which
    answers, and its process's late beat is stamped all the same."""
    host, port = local_cluster.addresses[0]
    url = f"redis+cluster://{HOST}:{free_port()},{host}:{port}/0"
    assert_the_pulse_beats(cluster_client, "host:closed-first:pulse", redis_url=url)


def assert_the_pulse_beats(
    cluster_client: redis.RedisCluster, identity: str, **settings: Any
) -> None:
    """A pulse of `identity` started with the Config `settings` stamps its late beat, and
    exits cleanly when stopped."""
    cluster_client.hset(keys.process(identity), "beat", "0")
    config = cogworker.Config(heartbeat_interval=0.1, orphan_threshold=1.0, **settings)
    companion = pulse.start(config, config.redis_target(), identity, logging.getLogger("test"))
    assert companion is not None
    try:
        wait_until(lambda: float(cluster_client.hget(keys.process(identity), "beat") or 0) > 0, 20)
    finally:
        companion.stop()
    assert companion.process.returncode == 0


def test_the_reconciler_s_scan_finds_in_progress_lists_on_every_primary(
    local_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    """Lists of unregistered processes on queues of each of the three primaries: the scan
    (`holders`) names every one, and `beats` reads a beat and Redis's time in one pipeline."""
    queues = ["default", "mail", "critical"]  # slots 270, 6891, 13508
    owners = {cluster_client.get_node_from_key(keys.queue(queue)).name for queue in queues}
    assert len(owners) == 3
    for number, queue in enumerate(queues):
        cluster_client.rpush(keys.in_progress(queue, f"host:{number}:gone"), "{}")
    registry = ProcessRegistry(cluster_client)
    assert registry.holders() == {f"host:{n}:gone": {queue} for n, queue in enumerate(queues)}

    cluster_client.sadd(keys.PROCESSES, "host:9:live")
    cluster_client.hset(keys.process("host:9:live"), "beat", "12.5")
    beats, now = registry.beats()
    assert beats == {"host:9:live": 12.5}
    assert now > 1_000_000_000
