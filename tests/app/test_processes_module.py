"""`cogworker.processes`: the public way to list workers and ask one to quiet or resume."""

from __future__ import annotations

import pytest
import redis

from cogworker import processes
from tests.app.helpers import Workers, process_hash, wait_for_processes
from tests.support.processes import CogworkerProcess, wait_until


def wait_for_quiet_flag(
    rc: redis.Redis, identity: str, quiet: str, worker: CogworkerProcess
) -> None:
    """Wait until the process's heartbeat hash says `quiet` ("true" or "false")."""
    wait_until(
        lambda: process_hash(rc, identity).get("quiet") == quiet,
        20.0,
        message=lambda: f"the worker never showed quiet={quiet}:\n{worker.log_tail()}",
    )


def test_a_worker_is_listed_and_quiets_and_resumes_when_asked(
    rc: redis.Redis, workers: Workers
) -> None:
    """`identities` lists a running worker; `send` quiets it, then resumes it."""
    worker = workers.start()
    [identity] = wait_for_processes(rc, 1, worker)
    assert processes.identities(rc) == [identity]

    processes.send(rc, identity, "quiet")
    wait_for_quiet_flag(rc, identity, "true", worker)
    processes.send(rc, identity, "resume")
    wait_for_quiet_flag(rc, identity, "false", worker)


def test_an_unknown_signal_is_refused(rc: redis.Redis) -> None:
    """A signal other than quiet, resume or stop is a ValueError naming the valid ones."""
    with pytest.raises(ValueError, match="expected one of"):
        processes.send(rc, "host:1:abc", "pause")
