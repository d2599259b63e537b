"""A failed job's traceback as stored with it: the classic layout, without 3.11's carets.

Python 3.11 marks the failing expression of each frame (`^^^^`), and finds
it by parsing each frame's source line again, a large part of a failing
job's cost in a worker.  The stored text keeps everything else the stdlib
prints: every frame with its source line, the exceptions it was raised
from or while handling, and notes.  Exception groups, whose nested layout
this doesn't draw, get the stdlib's text.
"""

from __future__ import annotations

import linecache
import traceback
from collections.abc import Iterator
from types import CodeType, FrameType

_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"
#: The code paths whose frames' text is kept, and the deepest kept (a deep recursion's
#: text is long and seldom the same twice).
_CACHED_PATHS = 256
_CACHED_DEPTH = 64
#: (code, line) of every frame of a path -> its text (a code object names its file and
#: function; one kept here stays alive, as its module's functions do anyway).
_formatted: dict[tuple[tuple[CodeType, int], ...], str] = {}


def backtrace(exc: BaseException) -> str:
    """The traceback text of `exc`, the exceptions it was raised from first."""
    chain = list(_chain(exc))
    if any(isinstance(link, BaseExceptionGroup) for link, _ in chain):
        return "".join(traceback.format_exception(exc))
    return "".join(_one(link) + joint for link, joint in reversed(chain))


def _chain(exc: BaseException) -> Iterator[tuple[BaseException, str]]:
    """`exc`, then what it was raised from, and so on: each with the text
    that goes between it and the exception raised from it (newest first)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    joint = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current, joint
        if current.__cause__ is not None:
            current, joint = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, joint = current.__context__, _CONTEXT
        else:
            current = None


def _one(exc: BaseException) -> str:
    frames = ""
    if exc.__traceback__ is not None:
        frames = _frames_text(list(traceback.walk_tb(exc.__traceback__)))
    return frames + "".join(traceback.format_exception_only(exc))


def _frames_text(walked: list[tuple[FrameType, int]]) -> str:
    """The "Traceback" part of a failure walked to `walked`, formatted once per code path:
    in a retry storm every failure goes the same way."""
    where = tuple((frame.f_code, line) for frame, line in walked)
    text = _formatted.get(where)
    if text is None:
        stack = traceback.StackSummary.from_list([_frame(frame, line) for frame, line in walked])
        text = "Traceback (most recent call last):\n" + "".join(stack.format())
        if len(walked) <= _CACHED_DEPTH:
            if len(_formatted) >= _CACHED_PATHS:
                _formatted.clear()  # rarely: a worker's jobs fail along a handful of paths
            _formatted[where] = text
    return text


def _frame(frame: FrameType, line: int) -> traceback.FrameSummary:
    """A frame as `StackSummary.extract` lists it, without column positions (so no
    carets) and without its `linecache.checkcache`, an `os.stat` of every file on every
    failure: a file's lines are read once and kept, as the running code was."""
    code = frame.f_code
    linecache.lazycache(code.co_filename, frame.f_globals)
    return traceback.FrameSummary(code.co_filename, line, code.co_name, lookup_line=False)
