"""What the pulse process needs to beat for a worker: where Redis is, and the one command.

The pulse (see app/worker/pulse_beater.py) speaks RESP itself; this module
turns the worker's Redis URL and identity into plain settings for it.
"""

from __future__ import annotations

import ssl
from typing import Any

from redis.connection import SSLConnection, parse_url

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.connection import SOCKET_TIMEOUT
from cogworker.adapters.scripts import LuaScript

PULSE = LuaScript("pulse")


def presence_ttl(orphan_threshold: float) -> int:
    """Seconds a process's presence keys outlive its last beat (well past the threshold)."""
    return int(max(60.0, orphan_threshold * 2))


def pulse_eval(
    identity: str, *, ttl: int, beat_gap: float, stale_after: float
) -> list[str | int | float]:
    """The arguments (after the word EVAL) that stamp `identity`'s beat if it is older
    than `stale_after` seconds."""
    script_keys = [keys.PROCESSES, keys.process(identity), keys.workers(identity), keys.BEATS]
    return [PULSE.source, len(script_keys), *script_keys, identity, ttl, beat_gap, stale_after]


def connection_settings(url: str) -> dict[str, Any]:
    """Where and how to connect for `url`: TCP or unix socket, TLS, AUTH, database."""
    parsed = parse_url(url)  # type: ignore[no-untyped-call]  # redis-py's, unannotated
    return {
        "host": parsed.get("host", "localhost"),
        "port": parsed.get("port", 6379),
        "path": parsed.get("path"),
        "db": parsed.get("db", 0),
        "username": parsed.get("username"),
        "password": parsed.get("password"),
        "timeout": SOCKET_TIMEOUT,
        "tls": _tls(parsed) if parsed.get("connection_class") is SSLConnection else None,
    }


def _tls(parsed: dict[str, Any]) -> dict[str, Any]:
    """The TLS options of a `rediss://` URL, as redis-py reads them."""
    required = parsed.get("ssl_cert_reqs", "required")
    return {
        "ca_certs": parsed.get("ssl_ca_certs"),
        "certfile": parsed.get("ssl_certfile"),
        "keyfile": parsed.get("ssl_keyfile"),
        "verify": required not in ("none", ssl.CERT_NONE),
        "check_hostname": bool(parsed.get("ssl_check_hostname", False)),
    }
