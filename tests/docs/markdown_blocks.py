"""The fenced blocks of the project's Markdown files, each with how it is checked.

Every fenced block (``` or ~~~, indented or not, whatever its language) must
be announced by a comment on the line before its fence, saying how
tests/docs checks it; a block without one, or a comment announcing no block,
fails the test of its file:

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
* ``<!-- check: output -->``: what the command block before it prints: each of
  its lines is a line of that output, but for the numbers (any value: a latency
  or a memory size varies between runs; only a fraction of a number of 1 or more,
  `4.0 s`, must be printed so), the jids (any 24 hex digits) and how many spaces
  part the columns;
* ``<!-- check: not run: REASON -->``: shown, not run, for the REASON given: the
  output of another situation than the sandbox's (a benchmark's, another
  Redis's), a picture of a layout, a command of minutes;
* ``<!-- check: two-commands -->``: the README's two commands (their own test).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import attrs

_CHECK = re.compile(r"^<!-- check: (?P<spec>.+?) -->$")
#: An opening fence: up to any indentation (a list item's), 3 or more ` or ~, an info string.
_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})")
#: What varies between runs of a command: jids, then numbers; and the columns' padding.
_JID = re.compile(r"\b[0-9a-f]{24}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACES = re.compile(r"\s+")


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
    """The blocks of `path` in order; an unannounced block, or an announcement of no
    block, is an error."""
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
            if line.strip() and check is not None:
                raise UncheckedBlockError(f"{path.name}:{number}: a check comment with no block")
            continue
        opened_at = number
        body, number = _body(lines, number, fence["fence"])
        if check is None:
            raise UncheckedBlockError(f"{path.name}:{opened_at}: a code block with no check")
        yield Block(path=path, line=opened_at, check=check, code="\n".join(body))
        check = None


def _body(lines: list[str], start: int, fence: str) -> tuple[list[str], int]:
    """The lines of a block whose `fence` opened before `start`, and the line after its end."""
    closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for end in range(start, len(lines)):
        if closing.match(lines[end]):
            return lines[start:end], end + 1
    raise UncheckedBlockError(f"a fence opened before line {start} is never closed")


def unshown_lines(sample: str, output: str) -> list[str]:
    """The lines of `sample` that are no line of `output`, what varies between runs aside."""
    shown = {_shape(line) for line in output.splitlines()}
    return [line for line in sample.splitlines() if line.strip() and _shape(line) not in shown]


def _shape(line: str) -> str:
    """A line of output with its jids and numbers blanked, its spaces collapsed."""
    return _SPACES.sub(" ", _NUMBER.sub(_number_shape, _JID.sub("JID", line))).strip()


def _number_shape(number: re.Match[str]) -> str:
    """`0.0` for a number of 1 or more with a fraction (`4.0 s`, `48.3 MB`: a format),
    else `0`: a whole number, or a fraction under 1, which the next run may print whole
    (a latency of `0.9 s` is `1 s` a moment later)."""
    whole, _, fraction = number[0].partition(".")
    return "0.0" if fraction and int(whole) > 0 else "0"
