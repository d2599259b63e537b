"""Running the inspecting commands of `cogworker` against the test's Redis, in this process
(click's runner: real Redis, real option parsing, the exit status as the shell sees it)."""

from __future__ import annotations

import json
from typing import Any

import attrs
from click.testing import CliRunner

from cogworker.app.cli import main


@attrs.frozen(kw_only=True)
class Answer:
    """What one command printed, and its exit status."""

    status: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        """The lines printed on stdout."""
        return self.stdout.splitlines()


@attrs.define
class Cli:
    """`cogworker COMMAND ... --redis-url URL` on one Redis."""

    redis_url: str

    def run(self, *args: str) -> Answer:
        """Run a command; what it printed and its exit status."""
        result = CliRunner().invoke(main, [*args, "--redis-url", self.redis_url])
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Answer(status=result.exit_code, stdout=result.stdout, stderr=result.stderr)

    def json(self, *args: str, status: int = 0) -> Any:
        """A command's `--json` answer, decoded, after checking its exit status."""
        answer = self.run(*args, "--json")
        assert answer.status == status, answer
        return json.loads(answer.stdout)
