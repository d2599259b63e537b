"""A child process whose wall clock is really off, by libfaketime (Debian's `faketime`).

`skewed_environment("+120s")` is the environment that runs a process with its
wall clock 120 s ahead (time(), gettimeofday(), CLOCK_REALTIME: what Python's
`time.time()` reads), and its monotonic clock true, as on a host whose clock
drifted or was set wrong.  scripts/test.sh installs `faketime` (and a C
compiler for the small shim below) on a fresh machine.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
from pathlib import Path

#: Undoes a libfaketime bug for monotonic sleeps (see the C file's comment).
SHIM_SOURCE = Path(__file__).with_name("monotonic_sleep.c")


def libfaketime() -> str:
    """The path of Debian's libfaketime, or AssertionError saying how to get it."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    assert found, "libfaketime is missing: run scripts/test.sh (it installs `faketime`)"
    return found[0]


def build_shim(directory: Path) -> Path:
    """Compile the monotonic-sleep shim into `directory`; the shared object's path."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler is not None, "no C compiler: run scripts/test.sh (it installs gcc)"
    target = directory / "monotonic_sleep.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(target), str(SHIM_SOURCE), "-ldl"],
        check=True,
        timeout=120,
    )
    return target


def skewed_environment(skew: str, shim: Path) -> dict[str, str]:
    """Environment variables that put a child's wall clock `skew` (like "+120s") off."""
    return {
        "LD_PRELOAD": f"{shim}:{libfaketime()}",
        "FAKETIME": skew,
        # A drifted host's monotonic clock (time since boot) is still true; faked, it
        # would also shift every timed wait of the process's threads.
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }
