"""Jobs and the APP config of the resharding test: the fault suite's oracle jobs on four
queues of the local cluster, two of whose slots the test moves to another primary.

`default` (slot 270) and `reports` (888) are among the first 1,000 slots of the primary
`redis-cli --cluster create` gives slots 0-5460, the ones the test moves; `search` (1586)
stays on that primary, `mail` (6891) lives on the primary they move to.  Every run is
noted in the oracle file (`tests/faults/jobs.py`); every job's status is tracked, so each
queue's slot holds a key per job and its move takes several MIGRATE batches.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

import cogworker
from tests.faults import oracle
from tests.faults.jobs import DoneAtGate, note
from tests.faults.jobs import config as fault_config

#: The queues whose slots move, then the one staying beside them and the one already there.
MOVED = ("default", "reports")
QUEUES = (*MOVED, "search", "mail")

#: Beats far inside the threshold: a beat refused while its slot moves is no verdict.
config = attrs.evolve(
    fault_config,
    queues=QUEUES,
    concurrency=5,
    heartbeat_interval=0.5,
    orphan_threshold=10.0,
    track_status=True,
    log_level="WARNING",
)


class FailsOnce(cogworker.Job, retry=3):
    """Fails its first run (retried a second later), then succeeds; each run noted."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """A second, whatever the count: the retry is due while the slots move."""
        return 1.0

    def perform(self, number: int) -> None:
        """Note the run; raise if it is the first."""
        first = oracle.runs(Path(os.environ["COGWORKER_ORACLE"]))[0][self.jid] == 0
        note("start", self.jid)
        note("end", self.jid)
        if first:
            raise RuntimeError(f"first run of {number}")


class Count(cogworker.Job):
    """Does nothing but note its run."""

    def perform(self, number: int) -> None:
        """Note start and end around nothing."""
        note("start", self.jid)
        note("end", self.jid)


# Each kind of job on each queue it is enqueued on (a job's queue is its class's).
class CountDefault(Count, queue="default"):
    """`Count` on default."""


class CountReports(Count, queue="reports"):
    """`Count` on reports."""


class CountSearch(Count, queue="search"):
    """`Count` on search."""


class CountMail(Count, queue="mail"):
    """`Count` on mail."""


class FailsOnceDefault(FailsOnce, queue="default"):
    """`FailsOnce` on default."""


class FailsOnceReports(FailsOnce, queue="reports"):
    """`FailsOnce` on reports."""


class FailsOnceSearch(FailsOnce, queue="search"):
    """`FailsOnce` on search."""


class FailsOnceMail(FailsOnce, queue="mail"):
    """`FailsOnce` on mail."""


class HeldDefault(DoneAtGate, queue="default"):
    """`DoneAtGate` on default: runs until the test opens its gate."""


class HeldReports(DoneAtGate, queue="reports"):
    """`DoneAtGate` on reports."""


COUNT = {"default": CountDefault, "reports": CountReports, "search": CountSearch, "mail": CountMail}
FAILS_ONCE = {
    "default": FailsOnceDefault,
    "reports": FailsOnceReports,
    "search": FailsOnceSearch,
    "mail": FailsOnceMail,
}
HELD = {"default": HeldDefault, "reports": HeldReports}
