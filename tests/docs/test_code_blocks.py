"""Every code block of the README and docs/ runs as written (see markdown_blocks.py).

Each Markdown file gets a sandbox folder and the test's own Redis
(`$COGWORKER_REDIS_URL`, which the documented configs fall back to); its
blocks run in order, so a file block is there for the blocks after it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs
import pytest

from tests.docs.markdown_blocks import Block, blocks_of, unshown_lines
from tests.support.processes import REPO_ROOT, log_tail, reap, spawn, wait_until

DOCS = sorted(
    [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", *(REPO_ROOT / "docs").glob("*.md")]
)
#: A long-running command gets this long to show what it was started for, then to stop.
UNTIL_TIMEOUT = 90.0
STOP_TIMEOUT = 40.0
#: A block that runs to its end (an install, a script) gets this long.
RUN_TIMEOUT = 300.0


def sandbox_environment(redis_url: str) -> dict[str, str]:
    """The shell a reader would have: the project's interpreter first on PATH, their Redis."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGWORKER_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["COGWORKER_REDIS_URL"] = redis_url
    # A terminal shows a job's print() at once; a pipe would hold it until exit.
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_to_end(block: Block, command: list[str], cwd: Path, env: Mapping[str, str]) -> str:
    """Run `command` (given the block on stdin) and require it to succeed; its output."""
    done = subprocess.run(
        command,
        input=block.code.encode(),
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    output = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{output[-3000:]}"
    return output


def run_until_ready(
    command: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log: Path,
    ready: Callable[[str], bool],
    what: str,
) -> str:
    """Start `command`, wait until `ready(its output)`, stop it with SIGTERM; its output."""
    process = spawn(command, log_path=log, cwd=cwd, env=env)
    try:
        wait_until(
            lambda: ready(log.read_text(errors="replace")),
            UNTIL_TIMEOUT,
            message=lambda: f"{what}:\n{log_tail(log)}",
        )
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(STOP_TIMEOUT)
    finally:
        reap(process)
    return log.read_text(errors="replace")


def run_until(block: Block, text: str, cwd: Path, env: Mapping[str, str]) -> str:
    """Start the block's command, wait for `text` in its output, stop it with SIGTERM; its
    output."""
    return run_until_ready(
        ["bash", "-c", block.code],
        cwd=cwd,
        env=env,
        log=cwd / f"block-{block.line}.log",
        ready=lambda output: text in output,
        what=f"{block.where} never printed {text!r}",
    )


@attrs.frozen
class Background:
    """A command of a second terminal, started by its block, running while the later blocks
    run, that must show `text` by the file's end."""

    block: Block
    process: subprocess.Popen[bytes]
    log: Path
    text: str

    @classmethod
    def start(
        cls, block: Block, ready: str, text: str, cwd: Path, env: Mapping[str, str]
    ) -> Background:
        """Start the block's command and wait until its output shows `ready`."""
        log = cwd / f"block-{block.line}.log"
        process = spawn(["bash", "-c", block.code], log_path=log, cwd=cwd, env=env)
        started = cls(block, process, log, text)
        try:
            started.wait_for(ready)
        except BaseException:
            reap(process)
            raise
        return started

    def wait_for(self, text: str) -> None:
        """Wait until the command's output shows `text`."""
        wait_until(
            lambda: text in self.log.read_text(errors="replace"),
            UNTIL_TIMEOUT,
            message=lambda: f"{self.block.where} never printed {text!r}:\n{log_tail(self.log)}",
        )

    def finish(self) -> None:
        """Wait for its text, then stop it with SIGTERM (killed if it fails to show it)."""
        try:
            self.wait_for(self.text)
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(STOP_TIMEOUT)
        finally:
            reap(self.process)


def run_block(
    block: Block, sandbox: Path, env: Mapping[str, str], background: list[Background]
) -> str | None:
    """Do what the block's check comment says (a background command joins `background`);
    the output of a command run to its end, or None."""
    match block.check:
        case ("file", relative):
            target = sandbox / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code + "\n")
        case ("python",):
            return run_to_end(block, [sys.executable, "-"], sandbox, env)
        case ("sh",):
            return run_to_end(block, ["bash", "-euo", "pipefail"], sandbox, env)
        case ("sh", "in", "checkout"):
            return run_to_end(block, ["bash", "-euo", "pipefail"], REPO_ROOT, env)
        case ("sh", "until", text):
            return run_until(block, text, sandbox, env)
        case ("sh", "background", "ready", ready, "until", text):
            background.append(Background.start(block, ready, text, sandbox, env))
        case ("two-commands",) | ("not", "run:", _, *_):
            pass  # tests/docs/test_two_commands.py runs the two commands
        case _:
            pytest.fail(f"{block.where}: unknown check {' '.join(block.check)!r}")
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_block_runs_as_written(doc: Path, redis_url: str, tmp_path: Path) -> None:
    """The blocks of one Markdown file, in order, each do what the page says they do."""
    env = sandbox_environment(redis_url)
    blocks = list(blocks_of(doc))
    background: list[Background] = []
    output: str | None = None
    try:
        for block in blocks:
            if block.check == ("output",):
                missing = unshown_lines(block.code, output or "")
                assert not missing, f"{block.where}: not printed: {missing}; printed:\n{output}"
                continue
            output = run_block(block, tmp_path, env, background)
        for command in background:
            command.finish()
    finally:
        for command in background:
            reap(command.process)
