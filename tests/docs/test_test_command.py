"""`bash scripts/test.sh` runs every part of the suite even when one failed, and says so."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support.processes import REPO_ROOT

TEST_SH = REPO_ROOT / "scripts" / "test.sh"


def steps(script: str) -> subprocess.CompletedProcess[str]:
    """Run `script` in bash with scripts/steps.sh sourced, as test.sh runs it (set -e)."""
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"source scripts/steps.sh\n{script}"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.processes
def test_a_failed_step_lets_the_next_run_and_fails_the_whole() -> None:
    """Steps one and three fail: two and three still run, the run fails naming one and three."""
    done = steps(
        "run_step one false\nrun_step two echo ran-two\nrun_step three false\nreport_steps\n"
        "echo never-here"
    )
    assert done.returncode == 1
    assert "ran-two" in done.stdout
    assert "never-here" not in done.stdout
    assert done.stdout.endswith("== failed:\n   - one\n   - three\n")


@pytest.mark.processes
def test_steps_that_never_run_are_named() -> None:
    """A failed check before the tests: the tests are listed as not run, the run fails."""
    done = steps("run_step lint false\nskip_steps_after_failure tests coverage\necho never-here")
    assert done.returncode == 1
    assert "== not run, as a step before failed:\n   - tests\n   - coverage\n" in done.stdout
    assert "never-here" not in done.stdout


@pytest.mark.processes
def test_all_passed_steps_pass() -> None:
    """No step failed: nothing is skipped and the run succeeds."""
    done = steps("run_step one true\nskip_steps_after_failure later\nreport_steps\necho done")
    assert (done.returncode, done.stdout) == (0, "== one\ndone\n")


def test_every_suite_part_of_test_sh_is_a_step() -> None:
    """The whole-suite part of test.sh runs each pytest and coverage call as a step (so a
    failed parallel part can't stop the solo tests and the floors unseen), then reports."""
    whole_suite = TEST_SH.read_text().split("\nfi\n")[-1]
    calls = [
        line for line in whole_suite.splitlines() if re.search(r'"\$bin/(pytest|coverage)"', line)
    ]
    assert len(calls) == 4
    assert all(line.startswith("run_step ") for line in calls)
    assert whole_suite.rstrip().endswith("report_steps")
