"""What users are told to import is the public API: a few modules, each with an `__all__`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.support.processes import REPO_ROOT

#: The modules a user imports from; everything else under cogworker is private.
PUBLIC_MODULES = (
    "cogworker",
    "cogworker.exceptions",
    "cogworker.testing",
    "cogworker.tracking",
    "cogworker.processes",
    "cogworker.dashboard",
    "cogworker.contrib.django",
)
#: A mention of a private package, as a dotted name or as `from cogworker import app`.
PRIVATE = re.compile(
    r"\bcogworker\.(adapters|app|domain)\b"
    r"|\bfrom\s+cogworker\s+import\s+[^\n]*\b(adapters|app|domain)\b"
)
USER_FACING = sorted(
    [
        REPO_ROOT / "README.md",
        *(REPO_ROOT / "docs").glob("*.md"),
        *(REPO_ROOT / "examples").rglob("*.py"),
    ]
)


@pytest.mark.parametrize("path", USER_FACING, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_user_facing_text_names_no_private_package(path: Path) -> None:
    """The README, docs/ and examples/ never send a user to cogworker.adapters, .app or .domain."""
    text = path.read_text(encoding="utf-8")
    found = [
        f"line {text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        for match in PRIVATE.finditer(text)
    ]
    assert found == []


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_name_a_public_module_exports_exists(name: str) -> None:
    """Each public module has an `__all__`, and every name in it resolves."""
    module = importlib.import_module(name)

    assert [item for item in module.__all__ if not hasattr(module, item)] == []


def test_the_guide_lists_exactly_the_public_modules() -> None:
    """The guide's "What you import" table names the public modules, no more, no fewer."""
    guide = (REPO_ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## What you import", 1)[1].split("\n## ", 1)[0]

    listed = re.findall(r"^\| `([\w.]+)` \|", section, flags=re.MULTILINE)

    assert sorted(listed) == sorted(PUBLIC_MODULES)


def test_the_exports_loaded_at_first_use_are_their_modules_own() -> None:
    """`cogworker.Client`, `AsyncClient`, `testing`... (imported at first use, so that a worker
    never loads them) are their modules' very objects, and listed by dir(); a name cogworker
    doesn't have is an AttributeError."""
    import cogworker
    from cogworker import testing
    from cogworker.app import async_client, cancelling, client, default_clients

    assert cogworker.Client is client.Client
    assert cogworker.AsyncClient is async_client.AsyncClient
    assert cogworker.CancelResult is cancelling.CancelResult
    assert cogworker.configure is default_clients.configure
    assert cogworker.status is default_clients.status
    assert cogworker.testing is testing
    assert testing.inline is not None
    assert {"Client", "AsyncClient", "testing", "configure"} <= set(dir(cogworker))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = cogworker.no_such_name
