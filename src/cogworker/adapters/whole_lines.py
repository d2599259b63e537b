"""A worker's stdout and stderr as jobs print to them: whole lines, never mixed mid-line.

`print(text)` writes `text`, then the newline, in two calls; a stream written
through as it goes (a pipe or a file with `PYTHONUNBUFFERED`, or a buffer
filling up) lets another thread's text in between, so twenty jobs printing at
once leave lines cut in two.  `WholeLines` keeps each thread's unfinished
line until its newline and writes every finished line at once, under one
lock, flushed (a log collector sees it as it happens).
"""

from __future__ import annotations

import io
import sys
import threading
from typing import Any, TextIO


class WholeLines(io.TextIOBase):
    """Text written to `stream` one whole line (or a flushed part of one) at a time."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._lock = threading.Lock()
        #: Each thread's unfinished line (only that thread reads or writes its entry).
        self._partial: dict[int, str] = {}

    def write(self, text: str) -> int:
        """Keep `text` until its line ends; write the lines it ends, at once."""
        thread = threading.get_ident()
        pending = self._partial.pop(thread, "") + text
        finished, newline, rest = pending.rpartition("\n")
        if rest:
            self._partial[thread] = rest
        if newline:
            self._emit(finished + newline)
        return len(text)

    def flush(self) -> None:
        """Write this thread's unfinished line as it is (asked for: `print(..., flush=True)`)."""
        self._emit(self._partial.pop(threading.get_ident(), ""))

    def writable(self) -> bool:
        """Always: it is an output stream."""
        return True

    def fileno(self) -> int:
        """The stream's file descriptor (for code that writes to it directly)."""
        return self._stream.fileno()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        return self._stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # a str, as the stream's
        """The stream's encoding."""
        return self._stream.encoding

    def __getattr__(self, name: str) -> Any:
        """Anything else (`buffer`, `errors`...) is the stream's."""
        return getattr(self._stream, name)

    def _emit(self, text: str) -> None:
        with self._lock:
            self._stream.write(text)
            self._stream.flush()


def print_whole_lines() -> None:
    """Make this process's `sys.stdout` and `sys.stderr` write whole lines (see above)."""
    if sys.stdout is not None and not isinstance(sys.stdout, WholeLines):
        sys.stdout = WholeLines(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, WholeLines):
        sys.stderr = WholeLines(sys.stderr)
