"""The import graph of a source tree, its circles, and chains through it (for `check_layers`).

A module imports what each of its import statements names, wherever the statement is
(inside a function, under `if TYPE_CHECKING:`): `import a.b` imports `a.b`, `from a
import b` imports the module `a.b` if there is one, else `a` (a name defined there).
A package's `__init__` runs before any module under it, but counts only where it is
imported by name: else every package would be in a circle with its own modules.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path


def module_name(path: Path, src: Path) -> str:
    """`src/cogworker/domain/job.py` -> `cogworker.domain.job` (a package's `__init__` -> it)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, package: str, modules: set[str]) -> Iterator[str]:
    """The modules of `modules` that the code of `tree` (in `package`) imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                named = f"{base}.{alias.name}"
                if named in modules:
                    yield named
                elif base in modules:
                    yield base


def import_graph(src: Path) -> dict[str, set[str]]:
    """Each module under `src` -> the modules under `src` it imports (never itself)."""
    paths = {module_name(path, src): path for path in src.rglob("*.py")}
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        graph[module] = set(_imported(tree, package, modules)) - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each set of modules that all reach one another (a strongly
    connected component of two or more, Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            members = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(members) > 1:
                found.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def path_between(
    graph: dict[str, set[str]],
    start: str,
    is_end: Callable[[str], bool],
    within: set[str] | None = None,
) -> list[str] | None:
    """The shortest chain of imports from `start` to a module `is_end` accepts (at least
    one import long), through `within` only if given; None if there is none."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for module in frontier:
            for imported in sorted(graph[module]):
                if within is not None and imported not in within:
                    continue
                if is_end(imported):
                    chain = [imported, module]
                    while chain[-1] != start:
                        chain.append(came_from[chain[-1]])
                    return chain[::-1]
                if imported not in came_from and imported != start:
                    came_from[imported] = module
                    following.append(imported)
        frontier = following
    return None
