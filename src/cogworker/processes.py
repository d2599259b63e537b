"""The worker processes registered on a Redis: list them, and ask one to quiet, resume or stop.

::

    import cogworker
    from cogworker import processes

    redis = cogworker.Client(config).redis
    for identity in processes.identities(redis):
        processes.send(redis, identity, "quiet")   # takes no new job from its next heartbeat
"""

from __future__ import annotations

from cogworker.adapters.process_registry import SIGNALS, ProcessRegistry
from cogworker.adapters.redis_client import RedisClient

__all__ = ["SIGNALS", "identities", "send"]


def identities(client: RedisClient) -> list[str]:
    """The identities (`host:pid:random`) of the processes registered on `client`'s Redis."""
    return ProcessRegistry(client).identities()


def send(client: RedisClient, identity: str, signal: str) -> None:
    """Ask process `identity` to "quiet", "resume" or "stop" at its next heartbeat
    (ValueError for any other signal)."""
    ProcessRegistry(client).send(identity, signal)
