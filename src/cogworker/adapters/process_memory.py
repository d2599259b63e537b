"""A process's resident memory, read from /proc without spawning anything."""

from __future__ import annotations

import os

_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def rss_kib(pid: int | None = None) -> int | None:
    """Resident set size in KiB now of process `pid` (this one by default), or None
    where it can't be read (no /proc, or the process is gone)."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_KIB
    except (OSError, ValueError, IndexError):
        return None
