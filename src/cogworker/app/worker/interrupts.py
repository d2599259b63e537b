"""Raising an exception into a running job from another thread: a cancel (and a time limit).

A sync job gets it as an asynchronous exception in its thread
(`PyThreadState_SetAsyncExc`, as Dramatiq's TimeLimit does), but only while
it is inside its `perform` window: the window is entered and left under the
same lock the interrupter takes, and an interrupt closes the window, so
the exception can't land later in the worker's own code (a settle's Redis
write).  Such an exception is delivered at the thread's next bytecode,
inside the runner's `except BaseException`.  A job blocked in C code gets
it only once it returns to Python.

An async job's task is cancelled on its loop instead; the runner tells
that cancellation from a stop's by `requested(jid)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

#: A sync job's thread (its ident), or an async job's task.
Target = int | asyncio.Task[Any]


class Interrupts:
    """The running jobs of one process that may be interrupted, and the interrupts asked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._targets: dict[str, Target] = {}
        self._requested: dict[str, type[BaseException]] = {}

    @contextlib.contextmanager
    def sync_window(self, jid: str) -> Iterator[None]:
        """While in it, the current thread (running `jid`'s perform) may be interrupted; one
        asked before it opened is raised at once."""
        with self._lock:
            asked = self._requested.get(jid)
            if asked is not None:
                raise asked
            self._targets[jid] = threading.get_ident()
        try:
            yield
        finally:
            self.close_window(jid)

    def open_async_window(self, jid: str, task: asyncio.Task[Any]) -> None:
        """From now `task` (running `jid` on its loop) may be cancelled, until `close_window`;
        one asked before raises at once.  A pair of calls rather than a context manager:
        every async job on the loop opens one."""
        with self._lock:
            asked = self._requested.get(jid)
            if asked is not None:
                raise asked
            self._targets[jid] = task

    def close_window(self, jid: str) -> None:
        """`jid`'s run may no longer be interrupted (its async window is closed)."""
        with self._lock:
            self._targets.pop(jid, None)

    def interrupt(self, jid: str, error: type[BaseException]) -> None:
        """Raise `error` into the run of `jid`, a job this process runs (cancel its task):
        now if it is inside its perform, else as its perform starts.  Once per run."""
        with self._lock:
            if jid in self._requested:
                return
            self._requested[jid] = error
            target = self._targets.pop(jid, None)
            if target is None:
                return
            if isinstance(target, int):
                _raise_in_thread(target, error)
            else:
                target.get_loop().call_soon_threadsafe(target.cancel)

    def requested(self, jid: str) -> type[BaseException] | None:
        """What `jid`'s run was interrupted with, if it was."""
        with self._lock:
            return self._requested.get(jid)

    def forget(self, jid: str) -> None:
        """The run of `jid` is settled: an interrupt asked for it is done with."""
        with self._lock:
            self._requested.pop(jid, None)


def _raise_in_thread(ident: int, error: type[BaseException]) -> None:
    """Raise `error` in thread `ident` at its next bytecode."""
    import ctypes  # here: a process that interrupts no sync job never loads it

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(error))
