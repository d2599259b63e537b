"""The README's two commands: the example worker runs demo jobs, and CI runs the test command."""

from __future__ import annotations

from pathlib import Path

import redis

from cogworker import tracking
from tests.docs.markdown_blocks import blocks_of
from tests.docs.test_code_blocks import run_until_ready, sandbox_environment
from tests.support.processes import REPO_ROOT


def two_commands() -> list[str]:
    """The commands of the README block announced as the two commands, comments cut."""
    (block,) = [b for b in blocks_of(REPO_ROOT / "README.md") if b.check == ("two-commands",)]
    return [line.split("#")[0].strip() for line in block.code.splitlines()]


def test_ci_runs_the_readme_test_command() -> None:
    """The README's second command is what .ci/run runs."""
    run, test = two_commands()
    assert run == "bash scripts/run-example.sh"
    assert test == "bash scripts/test.sh"
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert "exec bash scripts/test.sh" in ci


def test_run_example_works_demo_jobs_on_the_given_redis(
    redis_url: str, rc: redis.Redis, tmp_path: Path
) -> None:
    """`bash scripts/run-example.sh` runs the demo's jobs on $COGWORKER_REDIS_URL, then stops."""
    output = run_until_ready(
        ["bash", "scripts/run-example.sh"],
        cwd=REPO_ROOT,
        env=sandbox_environment(redis_url),
        log=tmp_path / "run-example.log",
        ready=lambda _: (tracking.totals(rc)["processed"] or 0) > 0,
        what="no demo job was processed",
    )
    assert "demo: round 1 enqueued" in output
