"""What the liveness fault tests share: their APP configs and finding a worker's identity."""

from __future__ import annotations

import redis

from cogworker.adapters import redis_keys as keys
from tests.faults import jobs_liveness
from tests.support.processes import wait_until

APP = "tests.faults.jobs_liveness:config"
SHORT_DRAIN_APP = "tests.faults.jobs_liveness:short_drain_config"
THRESHOLD = jobs_liveness.config.orphan_threshold


def identity_of(inspect: redis.Redis, pid: int) -> str:
    """The registered identity of the worker process `pid` (waiting for it to register)."""

    def registered() -> str | None:
        members = {bytes(member).decode() for member in inspect.smembers(keys.PROCESSES)}
        return next((identity for identity in members if f":{pid}:" in identity), None)

    found: str = wait_until(registered, 20, message=f"process {pid} never registered")
    return found
