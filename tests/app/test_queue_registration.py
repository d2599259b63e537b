"""A worker registers the queues it serves at start and with every heartbeat: the repair for
a push that crashed between its script and its registration (docs/redis-cluster.md,
"Registries")."""

from __future__ import annotations

import redis

from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, wait_for_processes
from tests.support.processes import wait_until


def _registered(rc: redis.Redis) -> set[str]:
    return {member.decode() for member in rc.smembers(keys.QUEUES)}


def test_a_worker_registers_its_queues_when_it_starts(workers: Workers, rc: redis.Redis) -> None:
    """Nothing pushed yet: the worker's start alone registers every queue it serves."""
    worker = workers.start(queues=["critical", "default"])

    wait_until(
        lambda: _registered(rc) == {"critical", "default"},
        message=lambda: f"registry {_registered(rc)}; log:\n{worker.log_tail()}",
    )


def test_a_queue_taken_off_the_registry_is_registered_again_by_a_running_worker(
    workers: Workers, rc: redis.Redis
) -> None:
    """A queue whose registration was lost while a job waits on it (a push that crashed after
    its script) is back in the registry within a heartbeat of the worker serving it."""
    worker = workers.start(queues=["critical", "default"])
    wait_for_processes(rc, 1, worker)
    rc.srem(keys.QUEUES, "critical", "default")

    wait_until(
        lambda: _registered(rc) == {"critical", "default"},
        message=lambda: f"registry {_registered(rc)}; log:\n{worker.log_tail()}",
    )
