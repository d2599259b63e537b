"""Job classes keeping their results, for the result tests (noting runs in the oracle, see
`tests.faults.jobs`), and a worker whose results may hold at most `MAX_RESULT_BYTES`."""

from __future__ import annotations

import time

import attrs

import cogworker
from tests.faults.jobs import config, note
from tests.faults.jobs_limits import LoopsUntilCancelled

MAX_RESULT_BYTES = 1_000
#: The worker of the result tests: a result of more than MAX_RESULT_BYTES fails its run.
results_config = attrs.evolve(config, max_result_bytes=MAX_RESULT_BYTES)


class Returns(cogworker.Job, keep_result=60):
    """Returns what it was given, after `seconds`."""

    def perform(self, value: object, seconds: float = 0) -> object:
        """Note start and end around the sleep."""
        note("start", self.jid)
        time.sleep(seconds)
        note("end", self.jid)
        return value


class AsyncReturns(cogworker.Job, keep_result=60):
    """Returns what it was given, from the event loop."""

    async def perform(self, value: object) -> object:
        """Return the value."""
        return value


class Dies(cogworker.Job, keep_result=60, retry=False):
    """Raises at once; no retry: straight to dead."""

    def perform(self) -> None:
        """Fail."""
        raise ValueError("no luck")


class Discards(cogworker.Job, keep_result=60):
    """Raises; its `retry_in` discards it."""

    def perform(self) -> None:
        """Fail."""
        raise KeyError("gone")

    @classmethod
    def retry_in(cls, count: int, exception: BaseException) -> object:
        """Drop it."""
        return cogworker.DISCARD


class ReturnsASet(cogworker.Job, keep_result=60, retry=False):
    """Returns a set, which JSON can't carry."""

    def perform(self) -> object:
        """Return a set."""
        return {1, 2}


class ReturnsTooMuch(cogworker.Job, keep_result=60, retry=False):
    """Returns more text than the worker's results may hold."""

    def perform(self) -> object:
        """Return MAX_RESULT_BYTES of text (and its quotes)."""
        return "x" * MAX_RESULT_BYTES


class LoopsKeepingResult(LoopsUntilCancelled, keep_result=60):
    """`LoopsUntilCancelled`, keeping its result."""


class KeepsNothing(cogworker.Job):
    """Returns a value nobody keeps."""

    def perform(self) -> int:
        """Return 1."""
        return 1
