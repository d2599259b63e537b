"""A reconciler's late outcomes (writes that failed while Redis was away, written on a
later pass) that find their job gone say so, as the acker does: after a failover to a
replica without the job's fetch, the job runs again, and its first run was never
acknowledged."""

from __future__ import annotations

import json
import logging

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle_order import SettleOrder
from tests.support.reconcilers import reconciler
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

#: The identity `tests.support.reconcilers.reconciler` gives its process.
IDENTITY = "reconciling"
QUEUE = "default"


def _ack(jid: str) -> SettleOrder:
    raw = json.dumps({"class": "app.Job", "args": [], "jid": jid, "queue": QUEUE}).encode()
    outcome = OutcomeRecord(kind="ack", jid=jid, class_name="app.Job", history_per_job=False)
    return SettleOrder(fetched=Fetched(queue=QUEUE, raw=raw), outcome=outcome)


def test_a_late_ack_finding_its_job_gone_reports_lost_ownership(
    rc: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Two acks left pending: the held job's is written (off the in-progress list); the
    other's job is back on its queue (its fetch lost), so nothing is written for it, and
    the log names its jid with reason=lost-ownership, which is how an operator (and the
    failover test) tells a run that may come again from an acknowledged one."""
    held, gone = _ack("held-1"), _ack("gone-1")
    rc.lpush(keys.in_progress(QUEUE, IDENTITY), held.fetched.raw)
    rc.lpush(keys.queue(QUEUE), gone.fetched.raw)
    late = reconciler(rc, cogworker.Config())
    late.state.pending.remember(held)
    late.state.pending.remember(gone)

    with caplog.at_level(logging.INFO, logger="test"):
        late.settle_pending()

    lost = [r for r in caplog.records if getattr(r, "reason", None) == "lost-ownership"]
    assert [getattr(r, "jid", None) for r in lost] == ["gone-1"]
    assert "first write landed" in lost[0].getMessage()  # (it may have: only its reply lost)
    assert len(late.state.pending) == 0
    assert rc.llen(keys.in_progress(QUEUE, IDENTITY)) == 0
    assert rc.lrange(keys.queue(QUEUE), 0, -1) == [gone.fetched.raw]
