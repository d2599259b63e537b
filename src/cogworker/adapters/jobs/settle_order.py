"""A settle order: the outcome to write for a job, with the job as it was fetched.

Its own module: `settle` writes orders and `settle_writes` builds their writes;
both name the order.
"""

from __future__ import annotations

import attrs

from cogworker.adapters.batch_events import with_batch
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord


@attrs.frozen(kw_only=True)
class SettleOrder:
    """An outcome to write for a job as it was fetched."""

    fetched: Fetched
    outcome: OutcomeRecord

    def with_batch(self) -> SettleOrder:
        """This order, its outcome naming the job's batch if it has one."""
        outcome = with_batch(self.outcome, self.fetched.raw)
        return self if outcome is self.outcome else attrs.evolve(self, outcome=outcome)
