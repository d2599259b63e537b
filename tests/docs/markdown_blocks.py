"""The code blocks of the project's Markdown files, each with how it is checked.

Every fenced block but a ```text one (output, a tree) must be announced by a
comment on the line before its fence, saying how tests/docs runs it:

* ``<!-- check: file PATH -->``: the block is a file of the doc's app, written
  to PATH in the doc's sandbox before the later blocks run;
* ``<!-- check: python -->``: run with the project's interpreter in the sandbox;
* ``<!-- check: sh -->``: run with bash in the sandbox (``sh in checkout``: in
  the repository, as an install command is meant);
* ``<!-- check: sh until "TEXT" -->``: a command that runs until stopped:
  started, watched until its output shows TEXT, then sent SIGTERM;
* ``<!-- check: sh background ready "READY" until "TEXT" -->``: a command a reader
  leaves running in a second terminal: started, watched until its output shows
  READY; the blocks after it run meanwhile, and by the file's end its output must
  show TEXT, then it is sent SIGTERM;
* ``<!-- check: two-commands -->``: the README's two commands (their own test).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import attrs

_CHECK = re.compile(r"^<!-- check: (?P<spec>.+?) -->$")
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
#: Fences that hold no code: output and pictures of a layout.
UNCHECKED_LANGUAGES = frozenset({"text"})


@attrs.frozen(kw_only=True)
class Block:
    """One fenced block: where it is, how it is checked, and its text."""

    path: Path
    line: int
    check: tuple[str, ...]
    code: str

    @property
    def where(self) -> str:
        """`file:line` of its opening fence."""
        return f"{self.path.name}:{self.line}"


class UncheckedBlockError(ValueError):
    """A code block nobody says how to run."""


def blocks_of(path: Path) -> Iterator[Block]:
    """The checked blocks of `path` in order; an unannounced code block is an error."""
    lines = path.read_text().splitlines()
    check: tuple[str, ...] | None = None
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        marker, fence = _CHECK.match(line), _FENCE.match(line)
        if marker:
            check = tuple(shlex.split(marker["spec"]))
            continue
        if fence is None:
            check = None if line.strip() else check
            continue
        opened_at = number
        body, number = _body(lines, number)
        if check is None and fence["lang"] not in UNCHECKED_LANGUAGES:
            raise UncheckedBlockError(f"{path.name}:{opened_at}: a code block with no check")
        if check is not None:
            yield Block(path=path, line=opened_at, check=check, code="\n".join(body))
        check = None


def _body(lines: list[str], start: int) -> tuple[list[str], int]:
    """The lines of a block whose fence opened before `start`, and the line after its end."""
    for end in range(start, len(lines)):
        if lines[end].startswith("```"):
            return lines[start:end], end + 1
    raise UncheckedBlockError(f"a fence opened before line {start} is never closed")
