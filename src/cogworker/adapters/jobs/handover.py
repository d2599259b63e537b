"""Hand-over: a stopping process gives the settlements it couldn't write to whichever
process reconciles next, each moved off its in-progress list in the same step.

A handed-over settlement is its `OutcomeRecord` as JSON on the unsettled
list, through the one cattrs converter (`adapters.codec`: a cold path,
written once per stop, read once).
"""

from __future__ import annotations

import json

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.batch_events import with_batch
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.replies import as_bytes


def handover_record(outcome: OutcomeRecord) -> str:
    """`outcome` as the JSON record a stopping process hands over."""
    # Imported here, as below: the converter (cattrs) is for this cold path only.
    from cogworker.adapters.codec import unstructured

    return json.dumps(unstructured(outcome))


def parse_handover_record(record: bytes) -> OutcomeRecord | None:
    """A handed-over record, or None if it isn't one (damaged by hand, say)."""
    from cogworker.adapters.codec import structured

    return structured(record, OutcomeRecord)


@attrs.define
class HandoverStore:
    """Hand-overs on one Redis."""

    settles: SettleStore

    @property
    def client(self) -> redis.Redis:
        """The Redis the settlements are written to."""
        return self.settles.client

    def hand_over(self, identity: str, job: Fetched, outcome: OutcomeRecord) -> bool:
        """Move a job off `identity`'s in-progress list onto the unsettled list, with
        the outcome still to write for it."""
        moved = scripts.HANDOVER(
            self.client,
            (keys.in_progress(identity), keys.UNSETTLED),
            (job.raw, handover_record(attrs.evolve(with_batch(outcome, job.raw), queue=job.queue))),
        )
        return bool(moved)

    def unsettled(self) -> list[bytes]:
        """The settlements stopped processes handed over, oldest first."""
        return [as_bytes(entry) for entry in self.client.lrange(keys.UNSETTLED, 0, -1)]

    def settle_handed_over(self, record: bytes, outcome: OutcomeRecord, now: float) -> bool:
        """Write an outcome a stopped process handed over; True if this call did."""
        return self.settles.settle_from(keys.UNSETTLED, record, outcome.queue, True, outcome, now)
