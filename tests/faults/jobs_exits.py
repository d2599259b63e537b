"""Jobs that end in a `BaseException` or a hostile exception, for the fault tests of issue 16 #6.

Every job notes its start in the oracle (see `tests.faults.jobs`) and has
no retries, so its one failure goes straight to dead.
"""

from __future__ import annotations

import sys

import attrs

import cogworker
from tests.faults.jobs import config, note

#: One thread: a job that stayed stuck would hold the only one.
single_config = attrs.evolve(config, concurrency=1)


class RaisesSystemExit(cogworker.Job, retry=False):
    """Raises SystemExit itself."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise SystemExit(3)


class CallsSysExit(cogworker.Job, retry=False):
    """Calls sys.exit(), as a script turned into a job might."""

    def perform(self) -> None:
        """Note the start, then exit."""
        note("start", self.jid)
        sys.exit("bye from the job")


class RaisesKeyboardInterrupt(cogworker.Job, retry=False):
    """Raises KeyboardInterrupt, as code that simulates Ctrl-C might."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise KeyboardInterrupt


class RaisesGeneratorExit(cogworker.Job, retry=False):
    """Raises GeneratorExit out of perform."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise GeneratorExit


class UnprintableError(Exception):
    """An exception whose str() and repr() raise."""

    def __str__(self) -> str:
        """Fail to format."""
        raise RuntimeError("no str for you")

    def __repr__(self) -> str:
        """Fail to format."""
        raise RuntimeError("no repr for you")


class RaisesUnprintable(cogworker.Job, retry=False):
    """Raises an exception that can't be formatted."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise UnprintableError


class NotesError(Exception):
    """An exception whose `__notes__` can't be read (the traceback reads them)."""

    @property
    def __notes__(self) -> list[str]:
        """Fail to be read."""
        raise RuntimeError("no notes for you")


class RaisesNotesError(cogworker.Job, retry=False):
    """Raises an exception whose traceback can't be formatted."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise NotesError("with unreadable notes")


class RaisesHugeMessage(cogworker.Job, retry=False):
    """Raises an exception with a 20 MB message."""

    def perform(self) -> None:
        """Note the start, then raise."""
        note("start", self.jid)
        raise ValueError("x" * 20_000_000)


class ExitingRetryIn(cogworker.Job, retry=2):
    """Fails, and its retry_in hook calls sys.exit() while the failure is settled."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Exit instead of answering."""
        sys.exit("retry_in exits")

    def perform(self) -> None:
        """Note the start, then fail."""
        note("start", self.jid)
        raise RuntimeError("an ordinary failure")
