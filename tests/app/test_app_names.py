"""What people type for APP instead of a module holding a Config: a file, a Job class, a
Config's dotted path, or the right name from the wrong directory; each says what to type."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.processes import child_environment, cogworker_command

JOBS_MODULE = """
import cogworker

class SendEvent(cogworker.Job):
    def perform(self) -> None: ...

settings = cogworker.Config()
"""
#: The command as click names it when run as `python -m cogworker` (`cogworker_command`).
TYPED = "python -m cogworker"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root holding the package `shopapp` with `shopapp/jobs.py`."""
    (tmp_path / "shopapp").mkdir()
    (tmp_path / "shopapp" / "__init__.py").write_text("")
    (tmp_path / "shopapp" / "jobs.py").write_text(JOBS_MODULE)
    return tmp_path


def refusal(directory: Path, *args: str) -> str:
    """What `cogworker ARGS...` run in `directory` printed, after checking it exited 2
    (a setting that can't work) without a traceback."""
    done = subprocess.run(
        cogworker_command(*args),
        cwd=directory,
        env=child_environment({"COGWORKER_REDIS_URL": "redis://127.0.0.1:1/0"}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    return " ".join(output.split())  # click wraps nothing, but a terminal width could


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(
            ["work", "shopapp/jobs.py"],
            "APP is a module's dotted name, not a file: try `{cogworker} work shopapp.jobs`",
            id="file",
        ),
        pytest.param(
            ["work", "shopapp.jobs.SendEvent"],
            "shopapp.jobs.SendEvent is a Job class, not a Config; APP names the module holding "
            "a cogworker.Config (`module` or `module:attr`): try `{cogworker} work shopapp.jobs`",
            id="job-class",
        ),
        pytest.param(
            ["work", "shopapp.jobs.settings"],
            "shopapp.jobs.settings is a Config: try `{cogworker} work shopapp.jobs:settings`",
            id="config-path",
        ),
        pytest.param(
            ["work", "shopapp.jobs"],
            "expected a cogworker.Config at config, found nothing; APP names the module "
            "holding a cogworker.Config (`module` or `module:attr`): "
            "try `{cogworker} work shopapp.jobs:settings`",
            id="other-attribute",
        ),
        pytest.param(
            ["stats", "--app", "shopapp.jobs.SendEvent"],
            "try `{cogworker} stats --app shopapp.jobs`",
            id="inspecting-command",
        ),
        pytest.param(
            ["serve", "./shopapp/jobs.py"],
            "not a file: try `{cogworker} serve shopapp.jobs`",
            id="serve",
        ),
    ],
)
@pytest.mark.processes
def test_an_app_naming_something_else_says_what_to_type(
    project: Path, args: list[str], says: str
) -> None:
    """The message says what APP is and the command to type instead, as it was typed."""
    assert says.format(cogworker=TYPED) in refusal(project, *args)


@pytest.mark.processes
def test_an_app_run_from_the_wrong_directory_names_the_directory(project: Path) -> None:
    """No such module from here: the message names the working directory and what to do."""
    elsewhere = project / "docs"
    elsewhere.mkdir()

    said = refusal(elsewhere, "work", "shopapp.jobs")

    assert "no module shopapp.jobs (No module named 'shopapp'" in said
    assert f"looked in the working directory {elsewhere} and sys.path" in said
    assert "run from your project's root or set PYTHONPATH" in said
