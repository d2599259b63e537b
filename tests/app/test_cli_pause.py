"""`cogworker pause|unpause QUEUE...` against a live worker, and `queues` showing the pause."""

from __future__ import annotations

import redis

import cogworker
from tests.app.cli_runner import Cli
from tests.app.helpers import Workers, runs, wait_for_fetches, wait_for_processes
from tests.app.jobs import Record
from tests.support.processes import wait_until


def test_pause_and_unpause_a_queue_a_live_worker_serves(
    cli: Cli, rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """Paused from the command line, the worker leaves the queue's jobs and `queues` says
    paused; unpaused, they run once each."""
    worker = workers.start()
    wait_for_processes(rc, 1, worker)

    assert cli.json("pause", "default", "later") == [
        {"queue": "default", "changed": True},
        {"queue": "later", "changed": True},
    ]
    assert cli.run("pause", "default").lines == ["QUEUE    OUTCOME", "default  already paused"]
    jids = [jid for jid in client.enqueue_many(Record, [[n] for n in range(3)]) if jid]
    wait_for_fetches(rc, 3, worker)
    assert [runs(rc, jid) for jid in jids] == [0, 0, 0]
    shown = {load["name"]: load for load in cli.json("queues")}
    assert {name: (load["size"], load["paused"]) for name, load in shown.items()} == {
        "default": (3, True),
        "later": (0, True),
    }
    assert "paused" in cli.run("queues").lines[1]

    assert cli.json("unpause", "default") == [{"queue": "default", "changed": True}]
    wait_until(
        lambda: all(runs(rc, jid) == 1 for jid in jids),
        15.0,
        message=lambda: f"the jobs never ran; log:\n{worker.log_tail()}",
    )
    assert cli.run("unpause", "default").lines[1] == "default  not paused"
    assert client.paused_queues() == {"later"}


def test_pause_refuses_a_name_no_queue_can_have(cli: Cli, client: cogworker.Client) -> None:
    """A bad name is a usage error (exit 2), and no queue of the command is paused."""
    answer = cli.run("pause", "fine", "a,b")
    assert answer.status == 2
    assert "a queue name is" in answer.stderr
    assert client.paused_queues() == frozenset()
