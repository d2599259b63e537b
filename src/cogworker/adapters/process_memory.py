"""A process's resident memory, read from /proc without spawning anything."""

from __future__ import annotations

import os
import resource

_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def rss_kib(pid: int | None = None) -> int | None:
    """Resident set size in KiB now of process `pid` (this one by default), or None
    where it can't be read (no /proc, or the process is gone)."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_KIB
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_kib() -> int:
    """The highest resident set size this process has had, in KiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
