"""`scripts/check_layers.py` refuses an import circle and the worker reached from the
dashboard or the client side, on small trees written for each case."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.processes import REPO_ROOT

SCRIPTS = REPO_ROOT / "scripts"


def check_layers() -> ModuleType:
    """The script as a module (it imports its sibling `import_graph`)."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location("check_layers", SCRIPTS / "check_layers.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def write_tree(src: Path, modules: dict[str, str]) -> Path:
    """Each dotted module name's file under `src`, its packages' `__init__` files too."""
    for name, code in modules.items():
        path = src.joinpath(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        for package in path.relative_to(src).parents:
            if package != Path():
                (src / package / "__init__.py").touch()
        path.write_text(code, encoding="utf-8")
    return src


def problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], modules: dict[str, str]) -> str:
    """What the check says of a tree of `modules`, which it must refuse."""
    assert check_layers().main(["check_layers", str(write_tree(tmp_path, modules))]) == 1
    return capsys.readouterr().err


def test_a_tree_keeping_the_rules_passes(tmp_path: Path) -> None:
    """The client side may import the worker's neighbours, and a module may import back a
    package it is in only where nothing comes back: no finding."""
    tree = {
        "cogworker.app.client": "from cogworker.app import config\n",
        "cogworker.app.config": "import cogworker.domain.job\n",
        "cogworker.app.worker.manager": "from cogworker.app.client import x\n",
        "cogworker.domain.job": "",
    }
    assert check_layers().main(["check_layers", str(write_tree(tmp_path, tree))]) == 0


def test_a_circle_is_refused_with_its_way_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two modules importing each other, one only inside a function, are a circle."""
    found = problems(
        tmp_path,
        capsys,
        {
            "cogworker.app.job": "def f():\n    from cogworker.app.client import c\n",
            "cogworker.app.client": "from cogworker.app.job import Job\n",
        },
    )
    assert "import circle of 2 modules: cogworker.app.client -> cogworker.app.job" in found


@pytest.mark.parametrize("start", ["cogworker.app.web.routes.jobs", "cogworker.app.pushing"])
def test_the_worker_reached_from_web_or_client_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], start: str
) -> None:
    """The dashboard and the client side must not reach the worker, even through a module
    allowed to import it."""
    found = problems(
        tmp_path,
        capsys,
        {
            start: "from cogworker.app import supervisor\n",
            "cogworker.app.supervisor": "from cogworker.app.worker.stopping import EXIT\n",
            "cogworker.app.worker.stopping": "",
        },
    )
    chain = f"{start} -> cogworker.app.supervisor -> cogworker.app.worker.stopping"
    assert f"{start} must not reach cogworker.app.worker: {chain}" in found
