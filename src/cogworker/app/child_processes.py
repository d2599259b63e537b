"""A supervisor's child processes: the command line that runs one, what the child does
between fork and exec, and how its exit reads in the log (`app.supervisor`)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable, Collection

import click

_PR_SET_PDEATHSIG = 1


def worker_arguments(context: click.Context, leave_out: Collection[str]) -> list[str]:
    """The arguments that run `context`'s command again as it was given, minus `leave_out`.

    Rebuilt from the parsed parameters rather than filtered from `sys.argv`,
    so every spelling (`--processes=4`, `-c4`, an option added later) comes
    out right.
    """
    arguments = [context.info_name or context.command.name or ""]
    for param in context.command.params:
        value = context.params.get(param.name or "")
        if param.name in leave_out or value is None or value == ():
            continue
        if isinstance(param, click.Argument):
            arguments += [str(item) for item in value] if param.nargs != 1 else [str(value)]
        elif isinstance(param, click.Option) and param.is_flag:
            spellings = param.opts if value else param.secondary_opts  # --x / --no-x
            arguments += [max(spellings, key=len)] if spellings else []
        else:
            flag = max(param.opts, key=len)  # the long spelling
            for item in value if param.multiple else [value]:
                arguments += [flag, str(item)]
    return arguments


def describe_exit(returncode: int) -> str:
    """`exit code 3` or `signal SIGKILL`, for the log."""
    if returncode >= 0:
        return f"exit code {returncode}"
    try:
        return f"signal {signal.Signals(-returncode).name}"
    except ValueError:
        return f"signal {-returncode}"


def load_prctl() -> Callable[[int, int], int] | None:
    """libc's prctl, loaded now: the child, between fork and exec, should only call it."""
    if sys.platform != "linux":
        return None
    try:
        prctl: Callable[[int, int], int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


def prepare_child(prctl: Callable[[int, int], int] | None, parent_pid: int) -> None:
    """Runs in the child between fork and exec (`prctl` loaded before the fork)."""
    # A signal reaching the child before exec must not be mistaken for
    # one of the supervisor's.
    signal.set_wakeup_fd(-1)
    # SIGTSTP's default action stops a process; a child still starting up
    # (no handler yet) would freeze and then not even obey SIGTERM.  An
    # ignored signal stays ignored through exec, until the worker installs
    # its own handler.
    signal.signal(signal.SIGTSTP, signal.SIG_IGN)
    # A group of its own: terminal signals reach the supervisor, which forwards them.
    os.setpgid(0, 0)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:  # the supervisor died before prctl took effect
            os._exit(1)
