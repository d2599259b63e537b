"""Jobs of the tests where results, per-key limits and batches meet: members keeping their
results, one of them under a concurrency limit, and a callback counting its runs (in the
test's Redis)."""

from __future__ import annotations

import time
from pathlib import Path

import cogworker
from tests.faults.jobs import note, side_effects

QUEUE = "together"
#: Seconds an `ExpiresSoon` may wait before it is dropped unrun.
EXPIRES_IN = 0.2


class Limited(
    cogworker.Job,
    queue=QUEUE,
    keep_result=60,
    retry=False,
    limit=cogworker.Concurrency(max=1, key=lambda args: str(args[0])),
):
    """One at a time per `key`: waits for `gate` (a file; "" for none), then returns
    `value`, or raises if `value` is "die"."""

    def perform(self, key: str, value: str, gate: str = "") -> str:
        """Note the start, wait for the gate, then end as `value` says."""
        note("start", self.jid)
        while gate and not Path(gate).exists():
            time.sleep(0.01)
        if value == "die":
            raise ValueError("no luck")
        return value


class Kept(cogworker.Job, queue=QUEUE, keep_result=60):
    """Returns its argument."""

    def perform(self, value: str) -> str:
        """Return it."""
        return value


class ExpiresSoon(Kept, expires_in=EXPIRES_IN):
    """`Kept`, dropped unrun if it waits more than EXPIRES_IN seconds."""


class Counts(cogworker.Job, queue=QUEUE, keep_result=60):
    """A batch callback counting its runs per batch, keeping the count as its result."""

    def perform(self, bid: str) -> int:
        """Count this run."""
        return int(side_effects().incr(f"fired:{bid}"))
