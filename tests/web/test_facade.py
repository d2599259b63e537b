"""The dashboard reaches Redis only through its store facade (`adapters.dashboard_*`)."""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path

#: The composition root: it opens the connection and maps Redis's errors to pages.
ROOT_MODULE = "app.py"
#: What the rest of the dashboard may import from the adapters beside the facade: key names and
#: the record converter, neither of which talks to Redis.
ALLOWED = {"redis_keys", "codec"}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _reaches_past_the_facade(name: str) -> bool:
    if name == "redis" or name.startswith("redis."):
        return True
    prefix = "cogworker.adapters."
    if not name.startswith(prefix):
        return False
    module = name.removeprefix(prefix).split(".")[0]
    return not module.startswith("dashboard_") and module not in ALLOWED


def test_no_page_or_helper_imports_redis_or_a_store_beside_the_facade() -> None:
    """Routes and web helpers import neither redis nor an adapter other than the dashboard's."""
    web = Path(str(resources.files("cogworker.app.web")))
    offenders = {
        f"{path.relative_to(web)}: {name}"
        for path in web.rglob("*.py")
        if path.name != ROOT_MODULE or path.parent != web
        for name in _imports(path)
        if _reaches_past_the_facade(name)
    }
    assert offenders == set()
