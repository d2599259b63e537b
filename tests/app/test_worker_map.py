"""The worker package's map names every thread the runtime spawns, and only those."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cogworker.app.worker as worker_package

WORKER_DIR = Path(worker_package.__file__).parent


def spawned_names() -> set[str]:
    """The thread names given to `spawn(...)`/`_spawn(...)` in the worker's modules (an
    f-string's literal start, as `processor-` of `processor-{index}`)."""
    names: set[str] = set()
    for path in WORKER_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name not in ("spawn", "_spawn"):
                continue
            first = node.args[0]
            if isinstance(first, ast.JoinedStr):
                first = first.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
    return names


def mapped_names() -> set[str]:
    """The thread names the map gives in brackets (``processor-0`` stands for all)."""
    doc = worker_package.__doc__ or ""
    threads = doc[doc.index("* the main thread") :]
    found = set(re.findall(r"\(``([a-z-]+?)(?:0)?``", threads))
    return {name for name in found if not name.startswith("pulse")}


def test_the_map_lists_the_threads_spawned() -> None:
    """Each thread the manager or the event loop spawns is on the map, and none else is."""
    spawned = spawned_names()
    assert "fetcher" in spawned  # the scan finds the spawns at all
    assert mapped_names() == spawned
