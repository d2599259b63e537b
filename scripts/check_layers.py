"""Fail if a layer of cogworker imports what its rules forbid (imports point inwards).

    python scripts/check_layers.py [SRC_DIR]    # SRC_DIR defaults to the repo's src/

* `cogworker.domain` is pure: no I/O, clock, randomness, logging or process
  modules, and nothing of the shell (`cogworker.adapters`, `cogworker.app`);
* `cogworker.adapters` does not import `cogworker.app`;
* `cogworker.contrib` (framework integrations, beside `cogworker.app`) may
  import every layer, and nothing else in cogworker imports it or the
  frameworks it integrates with: they are optional extras.

Every import statement counts, wherever it is (inside a function, under
`if TYPE_CHECKING:`); relative imports are resolved first.  Exit status 1
lists each offending import as `path:line: message`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

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


def module_name(path: Path, src: Path) -> str:
    """`src/cogworker/domain/job.py` -> `cogworker.domain.job` (a package's `__init__` -> it)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


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


def main(argv: list[str]) -> int:
    """Check the tree and report; 0 when every layer keeps its rules."""
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / "src"
    found = list(violations(src))
    for message in found:
        print(message, file=sys.stderr)
    if found:
        print(f"{len(found)} forbidden import(s): imports point inwards only.", file=sys.stderr)
        return 1
    print(f"layers ok: {', '.join(RULES)} under {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
