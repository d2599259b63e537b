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

#: A sync job's thread (its ident), or an async job's (loop, task).
Target = int | tuple[asyncio.AbstractEventLoop, "asyncio.Task[object]"]


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
            with self._lock:
                self._targets.pop(jid, None)

    @contextlib.contextmanager
    def async_window(self, jid: str) -> Iterator[None]:
        """While in it, the current task (running `jid`) may be cancelled."""
        task = asyncio.current_task()
        assert task is not None  # called on the loop, inside a task
        with self._lock:
            asked = self._requested.get(jid)
            if asked is not None:
                raise asked
            self._targets[jid] = (asyncio.get_running_loop(), task)
        try:
            yield
        finally:
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
                loop, task = target
                loop.call_soon_threadsafe(task.cancel)

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
