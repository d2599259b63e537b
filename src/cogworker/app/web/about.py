"""The Overview's "Cogworker" section: what this process runs on.

Versions come from the installed distributions' metadata, so they show
what this process actually loads, not what pyproject.toml allows.
Static while the process runs: read once per app.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata

#: Distribution name -> card label.
DEPENDENCIES = {
    "redis": "redis",
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
    "redis_version": "Version",
    "uptime_in_days": "Uptime (days)",
    "connected_clients": "Connections",
    "used_memory_human": "Memory Usage",
    "used_memory_peak_human": "Peak Memory Usage",
}


def redis_section(info: dict[str, object]) -> dict[str, str]:
    """Label -> value of the Redis grid, "n/a" where INFO doesn't say."""
    return {label: str(info.get(field, "n/a")) for field, label in REDIS_FIELDS.items()}
