"""The Overview's "Cogworker" section: what this process runs on.

Versions come from the installed distributions' metadata, so they show
what this process actually loads, not what pyproject.toml allows.
Static while the process runs: read once per app.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata

from cogworker.domain.cluster_info import PRIMARIES

#: Distribution name -> card label.
DEPENDENCIES = {
    # The client library, not the server (the Redis grid names the server's version).
    "redis": "redis-py (client)",
    "attrs": "attrs",
    "cattrs": "cattrs",
    "returns": "returns",
    "click": "click",
    "litestar": "Litestar",
    "croniter": "croniter",
}


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _license() -> str | None:
    try:
        meta = metadata.metadata("cogworker")
    except metadata.PackageNotFoundError:
        return None
    # get_all: a missing key is None without the deprecation warning `[]` gives on 3.12+.
    for field in ("License-Expression", "License"):
        found = meta.get_all(field)
        if found:
            return str(found[0])
    return None


def cogworker_section(version: str) -> dict[str, str]:
    """Label -> value, "n/a" where unknown, in the order shown."""
    values: dict[str, str | None] = {
        "Version": version,
        "Python": f"{platform.python_version()} ({sys.platform}-{platform.machine()})",
    }
    for distribution, label in DEPENDENCIES.items():
        values[label] = _version(distribution)
    values["License"] = _license()
    return {label: value or "n/a" for label, value in values.items()}


#: Redis INFO field -> card label, as the spec's Redis grid.
REDIS_FIELDS = {
    "redis_version": "Server version",
    "uptime_in_days": "Uptime (days)",
    "connected_clients": "Connections",
    "used_memory_human": "Memory Usage",
    "used_memory_peak_human": "Peak Memory Usage",
}


#: Redis INFO field -> card label, on the About page: what the server is.
SERVER_FIELDS = {
    "redis_version": "Server version",
    "redis_mode": "Mode",
    "os": "Operating system",
    "uptime_in_days": "Uptime (days)",
}


#: Fields only a cluster's combined INFO has (`cogworker.domain.cluster_info`), shown after
#: a grid's own: a single server's grid stays as it was.
CLUSTER_FIELDS = {PRIMARIES: "Primaries"}


def redis_section(info: dict[str, object], fields: dict[str, str] = REDIS_FIELDS) -> dict[str, str]:
    """Label -> value of a Redis grid (`fields`: INFO field -> label, and the cluster's own
    fields when `info` is a cluster's), "n/a" where INFO doesn't say."""
    shown = {**fields, **{field: label for field, label in CLUSTER_FIELDS.items() if field in info}}
    return {label: str(info.get(field, "n/a")) for field, label in shown.items()}
