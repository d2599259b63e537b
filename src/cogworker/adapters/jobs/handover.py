"""Hand-over: a stopping process gives the settlements it couldn't write to whichever
process reconciles next, each moved off its in-progress list in the same step.

A handed-over settlement is its `OutcomeRecord` as JSON on its queue's unsettled list
(`redis_keys.unsettled`, layout step 9), through the one cattrs converter
(`adapters.codec`: a cold path, written once per stop, read once).
"""

from __future__ import annotations

import json

import attrs

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.batch_events import with_batch
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.left_lists import LeftList, left_lists
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.redis_client import RedisClient


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
    def client(self) -> RedisClient:
        """The Redis the settlements are written to."""
        return self.settles.client

    def hand_over(self, identity: str, job: Fetched, outcome: OutcomeRecord) -> bool:
        """Move a job off `identity`'s in-progress list onto its queue's unsettled list,
        with the outcome still to write for it.  The queue is registered in `parts` before
        (a reconciler reads the unsettled lists of the parts)."""
        record = handover_record(attrs.evolve(with_batch(outcome, job.raw), queue=job.queue))
        pipe = pipelines.pipeline(self.client)
        pipe.sadd(keys.PARTS, job.queue)
        scripts.HANDOVER.queue(
            pipe,
            (keys.in_progress(job.queue, identity), keys.unsettled(job.queue)),
            (job.raw, record),
        )
        return bool(scripts.run_pipeline(self.client, pipe)[-1])

    def unsettled(self) -> list[LeftList]:
        """The queues' non-empty unsettled lists: settlements stopped processes handed
        over, oldest first in each."""
        return left_lists(self.client, ["unsettled"])

    def settle_handed_over(
        self, holder: str, record: bytes, outcome: OutcomeRecord, now: float
    ) -> bool:
        """Write an outcome a stopped process handed over, taken off the unsettled list
        `holder`; True if this call did."""
        return self.settles.settle_from(holder, record, outcome.queue, True, outcome, now)
