"""The `cogworker` command: `work` runs a worker process, `serve` the dashboard, and the
inspecting commands (`stats`, `ps`, `jobs`, `retry`, `quiet`...) read and act on Redis
through the dashboard's store; `migrate` brings the keys of an older layout to this one's.

Each command's module is imported only when that command runs: a worker never
loads the dashboard's modules (and Litestar with them).
"""

from __future__ import annotations

import importlib

import click

from cogworker.app.cli.serve import dashboard_credentials
from cogworker.app.cli.settings import SettingError, ensure_redis
from cogworker.app.version import VERSION

#: Command name -> "module:attribute" of its click command, in the order `--help` lists them.
COMMANDS = {
    "work": "work:work",
    "serve": "serve:serve",
    "stats": "inspect:stats",
    "queues": "inspect:queues",
    "ps": "inspect:ps",
    "jobs": "inspect:jobs",
    "retry": "act:retry",
    "kill": "act:kill",
    "delete": "act:delete",
    "cancel": "act:cancel",
    "enqueue": "act:enqueue",
    "pause": "pausing:pause",
    "unpause": "pausing:unpause",
    "periodic": "periodic:periodic",
    "quiet": "signals:quiet",
    "resume": "signals:resume",
    "stop": "signals:stop",
    "migrate": "migrate:migrate",
}


class LazyGroup(click.Group):
    """A group importing a command's module when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, in `COMMANDS` order."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command `cmd_name` (its module imported now), or None if there is no such one."""
        if cmd_name not in COMMANDS:
            return None
        module, _, attribute = COMMANDS[cmd_name].partition(":")
        command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        return command


@click.group(cls=LazyGroup)
@click.version_option(VERSION, prog_name="cogworker")
def main() -> None:
    """cogworker: reliable background jobs on Redis."""


__all__ = ["SettingError", "dashboard_credentials", "ensure_redis", "main"]
