"""What the pulse process needs to beat for a worker: where Redis is, and the one command.

The pulse (see app/worker/pulse_beater.py) speaks RESP itself; this module
turns the worker's Redis target and identity into plain settings for it.
"""

from __future__ import annotations

from typing import Any

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import SOCKET_TIMEOUT
from cogworker.adapters.redis_target import RedisTarget
from cogworker.adapters.scripts import LuaScript

PULSE = LuaScript("pulse")


def presence_ttl(orphan_threshold: float) -> int:
    """Seconds a process's presence keys outlive its last beat (well past the threshold)."""
    return int(max(60.0, orphan_threshold * 2))


def pulse_eval(identity: str, *, ttl: int, stale_after: float) -> list[str | int | float]:
    """The arguments (after the word EVAL) that stamp `identity`'s beat if it is older
    than `stale_after` seconds."""
    script_keys = [keys.process(identity), keys.workers(identity), keys.suspect(identity)]
    return [PULSE.source, len(script_keys), *script_keys, ttl, stale_after]


def connection_settings(target: RedisTarget) -> dict[str, Any]:
    """Where and how to connect for `target`: TCP or unix socket, TLS, AUTH, database,
    the sentinels to ask for the primary at each new connection, a cluster's nodes."""
    sentinels = target.sentinels
    return {
        "host": target.host,
        "port": target.port,
        # a cluster's start-up nodes, tried in turn when the node in use doesn't answer
        "nodes": [list(address) for address in target.cluster],
        "path": target.path,
        "db": target.db,
        "username": target.username,
        "password": target.password,
        "timeout": SOCKET_TIMEOUT,
        "tls": None if target.tls is None else attrs.asdict(target.tls),
        "sentinels": None
        if sentinels is None
        else {
            "addresses": [list(address) for address in sentinels.addresses],
            "master": sentinels.master,
            "username": sentinels.username,
            "password": sentinels.password,
        },
    }
