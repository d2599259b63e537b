"""A stored backtrace is the stdlib's traceback text without the caret lines."""

from __future__ import annotations

import traceback
from collections.abc import Callable

import pytest

from cogworker.adapters.backtrace import backtrace


def _stdlib_without_carets(exc: BaseException) -> str:
    lines = "".join(traceback.format_exception(exc)).splitlines(keepends=True)
    return "".join(line for line in lines if not _is_carets(line))


def _is_carets(line: str) -> bool:
    marks = line.strip()
    return bool(marks) and set(marks) <= {"^", "~"}


def _caught(raise_it: Callable[[], object]) -> BaseException:
    try:
        raise_it()
    except BaseException as error:
        return error
    raise AssertionError("nothing raised")


def _deep(depth: int) -> None:
    if depth == 0:
        values: dict[str, int] = {}
        print(values["missing"] + 1)
    _deep(depth - 1)


def _from_cause() -> None:
    try:
        _deep(2)
    except KeyError as error:
        raise RuntimeError("lookup failed") from error


def _while_handling() -> None:
    try:
        _deep(1)
    except KeyError:
        _ = 1 / 0


def _context_suppressed() -> None:
    try:
        _deep(1)
    except KeyError:
        raise ValueError("clean") from None


def _with_note() -> None:
    error = TypeError("bad type")
    error.add_note("while reading row 7")
    raise error


def _cycle() -> None:
    first, second = ValueError("first"), KeyError("second")
    first.__context__, second.__context__ = second, first
    raise first


@pytest.mark.parametrize(
    "raise_it", [lambda: _deep(3), _from_cause, _while_handling, _context_suppressed, _with_note]
)
def test_the_text_is_the_stdlibs_without_carets(raise_it: Callable[[], object]) -> None:
    """Every frame, source line, chained exception and note, in the stdlib's layout."""
    error = _caught(raise_it)
    text = backtrace(error)
    assert text == _stdlib_without_carets(error)
    assert not any(_is_carets(line) for line in text.splitlines())


def test_the_stdlib_draws_carets_for_these_frames() -> None:
    """(So the comparison above is not between two texts that never had any.)"""
    full = "".join(traceback.format_exception(_caught(lambda: _deep(1))))
    assert any(_is_carets(line) for line in full.splitlines())


def test_a_cycle_of_contexts_is_followed_once() -> None:
    """An exception that is its own context's context ends the chain, as in the stdlib."""
    error = _caught(_cycle)
    assert backtrace(error) == _stdlib_without_carets(error)


def test_an_exception_never_raised_is_its_last_line_only() -> None:
    """No traceback: just the type and message."""
    assert backtrace(ValueError("x")) == "ValueError: x\n"


def test_an_exception_group_is_the_stdlibs_text() -> None:
    """Groups keep the stdlib's nested layout (carets and all)."""

    def raise_group() -> None:
        raise ExceptionGroup("two failed", [_caught(lambda: _deep(0)), ValueError("v")])

    error = _caught(raise_group)
    assert backtrace(error) == "".join(traceback.format_exception(error))


def _fails_at(which: int) -> None:
    if which == 0:
        raise KeyError("first line")
    raise KeyError("second line")


def test_failures_along_one_path_share_its_text_and_another_path_gets_its_own() -> None:
    """The frames' text is kept per code path (a retry storm fails the same way each time):
    the same path again reads the same, another line of the same function its own."""
    first = [_caught(lambda: _fails_at(0)) for _ in range(2)]
    second = _caught(lambda: _fails_at(1))
    assert backtrace(first[0]) == backtrace(first[1]) == _stdlib_without_carets(first[1])
    assert backtrace(second) == _stdlib_without_carets(second)
    assert "second line" in backtrace(second).splitlines()[-2]
