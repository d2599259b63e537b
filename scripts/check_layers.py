"""Fail if a layer of cogworker imports what its rules forbid (imports point inwards).

    python scripts/check_layers.py [SRC_DIR]    # SRC_DIR defaults to the repo's src/

* `cogworker.domain` is pure: no I/O, clock, randomness, logging or process
  modules, and nothing of the shell (`cogworker.adapters`, `cogworker.app`);
* `cogworker.adapters` does not import `cogworker.app`;
* `cogworker.contrib` (framework integrations, beside `cogworker.app`) may
  import every layer, and nothing else in cogworker imports it or the
  frameworks it integrates with: they are optional extras;
* the dashboard (`cogworker.app.web`) and the client side (`CLIENT_MODULES`)
  never reach the worker runtime (`cogworker.app.worker`), through any chain
  of imports;
* no module reaches itself through a chain of imports (an import circle).

Every import statement counts, wherever it is (inside a function, under
`if TYPE_CHECKING:`); relative imports are resolved first.  Exit status 1
lists each offending import as `path:line: message`, each chain and circle
as its modules in order.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

from import_graph import circles, import_graph, module_name, path_between

#: The frameworks of the optional extras (`cogworker[django]`, `[otel]`): only contrib imports them.
OPTIONAL_FRAMEWORKS = ("django", "opentelemetry")

#: layer package -> modules it must not import (a module also bans its submodules);
#: a module is never banned from the package it is part of.
RULES: dict[str, tuple[str, ...]] = {
    "cogworker.domain": (
        *("redis", "socket", "subprocess", "threading", "asyncio", "os", "sys", "time"),
        *("random", "logging", "psutil", "litestar", "click"),
        *("cogworker.adapters", "cogworker.app", *OPTIONAL_FRAMEWORKS),
    ),
    "cogworker.adapters": ("cogworker.app", *OPTIONAL_FRAMEWORKS),
    "cogworker.app": OPTIONAL_FRAMEWORKS,
    "cogworker": ("cogworker.contrib",),
}

WORKER = "cogworker.app.worker"
#: The client side: what an app that only enqueues (and inspects, cancels, tests) loads.
CLIENT_MODULES = tuple(
    f"cogworker.app.{name}"
    for name in (
        *("client", "async_client", "default_clients", "enqueue_call", "open_calls"),
        *("pushing", "async_pushing", "push_batch", "job_record", "periodic_runs"),
        *("batches", "async_batches", "cancelling", "results", "testing"),
    )
)
#: module or package -> what it must never reach through any chain of imports.
NEVER_REACHES: dict[str, str] = {
    "cogworker.app.web": WORKER,
    **dict.fromkeys(CLIENT_MODULES, WORKER),
}


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """Each (line, absolute module name) the code imports; `from m import x` yields m and m.x."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def is_within(name: str, banned: str) -> bool:
    """Whether module `name` is `banned` or one of its submodules."""
    return name == banned or name.startswith(banned + ".")


def violations(src: Path) -> Iterator[str]:
    """`path:line: message` for every forbidden import under `src`."""
    for layer, banned in RULES.items():
        for path in sorted((src / layer.replace(".", "/")).rglob("*.py")):
            module = module_name(path, src)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            seen: set[tuple[int, str]] = set()
            for line, name in sorted(imported_modules(tree, module, path.name == "__init__.py")):
                for forbidden in banned:
                    if is_within(module, forbidden):
                        continue
                    if is_within(name, forbidden) and (line, forbidden) not in seen:
                        seen.add((line, forbidden))
                        yield f"{path}:{line}: {layer} must not import {forbidden} ({name})"


def reached(graph: dict[str, set[str]]) -> Iterator[str]:
    """A message for each module of `NEVER_REACHES` that reaches what it must not."""
    for start, banned in NEVER_REACHES.items():
        for module in sorted(graph):
            if not is_within(module, start):
                continue
            chain = path_between(graph, module, functools.partial(is_within, banned=banned))
            if chain is not None:
                yield f"{module} must not reach {banned}: {' -> '.join(chain)}"


def circled(graph: dict[str, set[str]]) -> Iterator[str]:
    """A message for each import circle: its modules, and one way round it."""
    for members in circles(graph):
        first = members[0]
        way = path_between(graph, first, first.__eq__, within=set(members))
        assert way is not None  # a circle's first member reaches itself within it
        yield f"import circle of {len(members)} modules: {' -> '.join(way)}"


def main(argv: list[str]) -> int:
    """Check the tree and report; 0 when every layer keeps its rules."""
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / "src"
    graph = import_graph(src)
    found = [*violations(src), *reached(graph), *circled(graph)]
    for message in found:
        print(message, file=sys.stderr)
    if found:
        print(f"{len(found)} finding(s): imports point inwards, never round.", file=sys.stderr)
        return 1
    print(f"layers ok: {', '.join(RULES)} under {src}; no import circle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
