"""Signals as bytes on a pipe: a loop waiting in `select` learns of each at once, and no
handler runs in the middle of its bookkeeping (`app.supervisor`)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Collection, Iterator


@contextlib.contextmanager
def signals_to_pipe(handled: Collection[int]) -> Iterator[int]:
    """The `handled` signals arrive as bytes on the yielded fd (their numbers).

    The handlers themselves do nothing: Python writes each signal's number
    to the wakeup fd, so the loop learns of it even when it arrives just
    before `select`, and no handler ever runs in the middle of the loop's
    bookkeeping.  (Handling SIGCHLD this way makes a child's exit wake the loop.)
    """
    reader, writer = os.pipe()
    os.set_blocking(reader, False)
    os.set_blocking(writer, False)
    previous = {signum: signal.signal(signum, _ignore) for signum in handled}
    previous_wakeup = signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
    try:
        yield reader
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.close(reader)
        os.close(writer)


def _ignore(signum: int, frame: object) -> None:
    """A handler that does nothing: the wakeup fd carries the signal to the loop."""


def drain(reader: int) -> list[int]:
    """The signal numbers written to the wakeup fd since the last call, in order."""
    received = bytearray()
    while True:
        try:
            chunk = os.read(reader, 512)
        except BlockingIOError:
            break
        if not chunk:
            break
        received += chunk
    return list(received)
