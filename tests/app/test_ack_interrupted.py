"""An ack that can't be written (Redis away) is kept for a later pass, and its log line
says what holds: written when Redis answers again, and the job may run again after all
if a failover lost its fetch (the promoted replica still has it on its queue)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
import redis

from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import outcome_record
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.app.worker.acker import Acker
from cogworker.app.worker.settler import Settler
from cogworker.app.worker.state import WorkerState
from cogworker.domain.settlement import Ack, Effects
from tests.support.redis_server import free_port

OWNER = "h:1:a"


@pytest.fixture
def nobody_answers() -> Iterator[redis.Redis]:
    """A client of a port nothing listens on: every write fails, as in an outage."""
    client = redis.Redis(port=free_port(), socket_connect_timeout=2.0, socket_timeout=2.0)
    yield client
    client.close()


def fetched(jid: str) -> Fetched:
    """A fetched job of queue "default"."""
    raw = json.dumps({"class": "app.Job", "args": [], "jid": jid, "queue": "default"})
    return Fetched(queue="default", raw=raw.encode())


def ack(jid: str) -> Ack:
    """The settlement of `jid`'s successful run."""
    return Ack(jid=jid, class_name="app.Job", effects=Effects())


def interrupted_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The messages logged with reason=ack-interrupted."""
    records = caplog.records
    return [r.getMessage() for r in records if getattr(r, "reason", "") == "ack-interrupted"]


def test_the_settlers_line_says_a_failover_may_run_the_job_again(
    nobody_answers: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Without an acker: the ack is remembered, and the line names what follows."""
    state = WorkerState(identity=OWNER)
    settles, recovers = SettleStore(nobody_answers), RecoverStore(nobody_answers)
    settler = Settler(settles, recovers, state, logging.getLogger("test"), owner=OWNER)

    with caplog.at_level(logging.ERROR, logger="test"):
        settler.write_ack(fetched("j1"), ack("j1"))

    assert len(state.pending) == 1
    [line] = interrupted_lines(caplog)
    assert line.startswith("couldn't acknowledge a finished job (")
    assert line.endswith(
        "; will ack it when Redis answers again (a failover that lost its fetch may run it "
        "again: then logged as lost-ownership)"
    )


def test_the_ackers_line_says_a_failover_may_run_the_jobs_again(
    nobody_answers: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """A batch of two acks: both remembered, one line for them."""
    state = WorkerState(identity=OWNER)
    acker = Acker(SettleStore(nobody_answers), state, logging.getLogger("test"), owner=OWNER)
    for jid in ("j1", "j2"):
        acker.submit(SettleOrder(fetched=fetched(jid), outcome=outcome_record(ack(jid))))
    acker.stop()

    with caplog.at_level(logging.ERROR, logger="test"):
        acker.run()  # writes what was handed over, then ends: stopped

    assert len(state.pending) == 2
    [line] = interrupted_lines(caplog)
    assert line.startswith("couldn't acknowledge 2 finished jobs (")
    assert line.endswith(
        "; will ack them when Redis answers again (a failover that lost their fetch may run "
        "them again: then logged as lost-ownership)"
    )
