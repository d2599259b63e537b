"""Quiet, resume and stop: through the process's signal key (the dashboard's way) and SIGTSTP."""

from __future__ import annotations

import signal

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from tests.app.helpers import (
    Workers,
    process_hash,
    runs,
    wait_for_beats_over,
    wait_for_processes,
)
from tests.app.jobs import Record
from tests.support.processes import CogworkerProcess, wait_until


def wait_until_quiet(rc: redis.Redis, identity: str, worker: CogworkerProcess) -> None:
    """Wait until the heartbeat says quiet and no fetch is still blocked on a queue."""
    wait_until(
        lambda: process_hash(rc, identity).get("quiet") == "true",
        10.0,
        message=lambda: f"never quiet; log:\n{worker.log_tail()}",
    )
    # A blocking fetch begun before the quiet could still take one job: let it time out.
    wait_until(
        lambda: not any("b" in entry["flags"] for entry in rc.client_list()),
        10.0,
        message="a fetch stayed blocked on a queue",
    )


def assert_stays_queued(
    rc: redis.Redis, client: cogworker.Client, identity: str, worker: CogworkerProcess
) -> str:
    """Enqueue a job and check it is still on its queue a second (five heartbeats) later."""
    jid = client.enqueue(Record, "while quiet")
    assert jid is not None
    wait_for_beats_over(rc, identity, 1.0, worker)
    assert rc.llen(keys.queue("default")) == 1
    assert runs(rc, jid) == 0
    assert process_hash(rc, identity)["quiet"] == "true"
    return jid


def test_quiet_resume_and_stop_through_the_signal_key(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """ "quiet" stops a process taking jobs, "resume" makes it run them, "stop" ends it
    cleanly (exit 0, presence keys gone)."""
    worker = workers.start()
    [identity] = wait_for_processes(rc, 1, worker)
    registry = ProcessRegistry(rc)
    assert process_hash(rc, identity)["quiet"] == "false"

    registry.send(identity, "quiet")
    wait_until_quiet(rc, identity, worker)
    jid = assert_stays_queued(rc, client, identity, worker)

    registry.send(identity, "resume")
    wait_until(
        lambda: runs(rc, jid) == 1,
        10.0,
        message=lambda: f"never ran after resume; log:\n{worker.log_tail()}",
    )
    wait_until(
        lambda: process_hash(rc, identity).get("quiet") == "false",
        5.0,
        message="the heartbeat still says quiet after resume",
    )

    registry.send(identity, "stop")
    assert worker.wait_for_exit(15.0) == 0
    assert not rc.exists(keys.process(identity))
    assert not rc.sismember("cogworker:processes", identity)
    assert not rc.exists(f"cogworker:{{q:default}}:inprogress:{identity}")
    assert runs(rc, jid) == 1


def test_sigtstp_quiets_the_process(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """SIGTSTP makes a process quiet: it stays up and leaves new jobs queued until resumed."""
    worker = workers.start()
    [identity] = wait_for_processes(rc, 1, worker)

    worker.send_signal(signal.SIGTSTP)
    wait_until_quiet(rc, identity, worker)
    jid = assert_stays_queued(rc, client, identity, worker)
    assert worker.is_running

    ProcessRegistry(rc).send(identity, "resume")
    wait_until(
        lambda: runs(rc, jid) == 1,
        10.0,
        message=lambda: f"never ran after resume; log:\n{worker.log_tail()}",
    )


@pytest.mark.parametrize("flag", ["--paused", "--quiet"])
def test_a_worker_started_paused_takes_no_job_until_resumed(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, flag: str
) -> None:
    """`cogworker work --paused` (or `--quiet`): the process registers as quiet, leaves jobs
    queued, and runs them once resumed (the dashboard's way)."""
    worker = workers.start(extra_args=[flag])
    [identity] = wait_for_processes(rc, 1, worker)
    assert process_hash(rc, identity)["quiet"] == "true"
    jid = assert_stays_queued(rc, client, identity, worker)

    ProcessRegistry(rc).send(identity, "resume")
    wait_until(
        lambda: runs(rc, jid) == 1,
        10.0,
        message=lambda: f"never ran after resume; log:\n{worker.log_tail()}",
    )
