"""cogworker's version, read once from the installed distribution's metadata.

pyproject.toml's `version` is the one place it is written; everything that
shows a version (`cogworker --version`, `cogworker.__version__`, the
heartbeat, the dashboard) uses `VERSION`.
"""

from __future__ import annotations

from importlib import metadata


def _installed_version() -> str:
    try:
        return metadata.version("cogworker")
    except metadata.PackageNotFoundError:
        # Imported from a source tree that was never installed: there is no metadata to read.
        return "0+unknown"


VERSION = _installed_version()
