"""`cogworker quiet|resume|stop`, `retry|kill|delete`, `cancel` and `enqueue` acting on real
workers and a real Redis, and the exit statuses scripts rely on (0 done, 1 not found or
refused, 2 usage)."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

import cogworker
from tests.app import cli_app
from tests.app.cli_runner import Cli
from tests.app.helpers import (
    Workers,
    logs,
    process_hash,
    queue_payloads,
    wait_for_processes,
    zset_entries,
)
from tests.app.jobs import AlwaysFails, NoRetryZero, Record
from tests.support.processes import run_to_exit, wait_until


def test_quiet_resume_and_stop_a_live_process(
    cli: Cli, rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """quiet shows in the process's heartbeat and in `ps`; after resume it runs a job; after
    stop it exits 0."""
    worker = workers.start()
    [identity] = wait_for_processes(rc, 1, worker)

    assert cli.json("quiet", identity) == [{"identity": identity, "sent": True}]
    wait_until(
        lambda: process_hash(rc, identity).get("quiet") == "true",
        20.0,
        message=lambda: f"never quiet; log:\n{logs(worker)}",
    )
    assert cli.run("ps").lines[1].split()[-2] == "quiet"
    assert cli.run("resume", "--all").status == 0
    wait_until(
        lambda: process_hash(rc, identity).get("quiet") == "false",
        20.0,
        message=lambda: f"never resumed; log:\n{logs(worker)}",
    )
    jid = client.enqueue(Record, "after resume")
    wait_until(lambda: rc.sismember("done", str(jid)), 20.0, message=lambda: logs(worker))
    stopped = cli.run("stop", identity)

    assert stopped.lines[1].split() == [identity, "stopping"]
    assert worker.wait_for_exit(30.0) == 0


def test_retry_a_dead_job_puts_it_back_on_its_queue(
    cli: Cli, rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """`retry JID` of a dead job empties the dead set and queues it again; a worker runs it."""
    worker = workers.start()
    jid = client.enqueue(NoRetryZero, "again")
    wait_until(
        lambda: rc.zcard("cogworker:{q:default}:dead") == 1, 20.0, message=lambda: logs(worker)
    )
    worker.terminate(30.0)

    answer = cli.json("retry", str(jid))

    assert answer == [{"jid": jid, "done": True, "outcome": "retried", "was": "dead"}]
    assert rc.zcard("cogworker:{q:default}:dead") == 0
    assert [job["jid"] for job in queue_payloads(rc, "default")] == [jid]
    again = workers.start()
    wait_until(lambda: rc.llen(f"starts:{jid}") == 2, 20.0, message=lambda: logs(again))


def test_kill_a_retrying_job_and_delete_a_queued_one(
    cli: Cli, rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """`kill` moves a retrying job to dead, running `--app`'s death handlers; `delete` takes a
    queued job off; `kill` of a queued one is refused with status 1."""
    cli_app.DEATHS.clear()
    worker = workers.start()
    retrying = client.enqueue(AlwaysFails, "retrying")
    wait_until(
        lambda: rc.zcard("cogworker:{q:default}:retry") == 1, 20.0, message=lambda: logs(worker)
    )
    worker.terminate(30.0)
    queued = client.enqueue(Record, "queued")

    killed = cli.json("kill", str(retrying), "--app", "tests.app.cli_app")
    refused = cli.run("kill", str(queued))
    deleted = cli.json("delete", str(queued))

    assert killed == [{"jid": retrying, "done": True, "outcome": "killed", "was": "retrying"}]
    assert [job["jid"] for job, _ in zset_entries(rc, "cogworker:{q:default}:dead")] == [retrying]
    [death] = cli_app.DEATHS
    assert death == (
        retrying,
        "JobKilledError",
        f"job {retrying} was killed by hand from the command line",
    )
    assert refused.status == 1
    assert "refused: already enqueued on default" in refused.stdout
    assert deleted == [{"jid": queued, "done": True, "outcome": "deleted", "was": "enqueued"}]
    assert queue_payloads(rc, "default") == []


def test_cancel_a_waiting_job_says_what_happened(
    cli: Cli, rc: redis.Redis, client: cogworker.Client
) -> None:
    """`cancel` removes a scheduled job (0); again it is already finished, and a jid nobody
    enqueued is not found (1 each)."""
    jid = client.enqueue_in(600, Record, "later")

    removed = cli.json("cancel", str(jid))
    again = cli.json("cancel", str(jid), "nobody", status=1)

    assert removed == [{"jid": jid, "result": "removed"}]
    assert rc.zcard("cogworker:{q:default}:schedule") == 0
    assert again == [
        {"jid": jid, "result": "already finished"},
        {"jid": "nobody", "result": "not found"},
    ]


def test_enqueue_a_class_by_name_on_a_queue_later(cli: Cli, rc: redis.Redis) -> None:
    """`enqueue CLASS ARGS --queue Q --in S` schedules a run of the imported class on Q."""
    answer = cli.json("enqueue", "tests.app.jobs.Record", '[1, {"a": "b"}]', "--queue", "other")
    later = cli.json("enqueue", "tests.app.jobs.Record", "[]", "--in", "120")

    assert [job["args"] for job in queue_payloads(rc, "other")] == [[1, {"a": "b"}]]
    assert answer["queue"] == "other"
    [(scheduled, at)] = zset_entries(rc, "cogworker:{q:default}:schedule")
    assert scheduled["jid"] == later["jid"]
    assert at == pytest.approx(later["at"])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(["retry", "nosuchjid"], "not found", id="retry-unknown-jid"),
        pytest.param(["quiet", "nosuch:1:x"], "not registered", id="quiet-unknown-process"),
        pytest.param(["stop", "--all"], "no process is registered", id="stop-nobody"),
        pytest.param(["enqueue", "tests.app.jobs.Nothing"], "Nothing not found", id="no-class"),
    ],
)
def test_not_found_exits_1(cli: Cli, args: list[str], says: str) -> None:
    """A jid, process or class that isn't there is exit status 1, saying so."""
    answer = cli.run(*args)

    assert answer.status == 1
    assert says in answer.stdout + answer.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(["quiet"], "name one or more IDENTITY, or give --all", id="no-identity"),
        pytest.param(["quiet", "x", "--all"], "(not both)", id="identity-and-all"),
        pytest.param(["enqueue", "tests.app.jobs.Record", "{}"], "not a JSON array", id="args"),
        pytest.param(["enqueue", "tests.app.jobs.Record", "[", "--queue", "q"], "not JSON", id="j"),
        pytest.param(["cancel", "bad jid"], "jid 'bad jid'", id="bad-jid"),
        pytest.param(["jobs", "dead", "--limit", "0"], "--limit", id="limit"),
        pytest.param(["jobs", "nothing"], "No such command", id="no-such-listing"),
    ],
)
def test_bad_usage_exits_2(cli: Cli, args: list[str], says: str) -> None:
    """A usage error is exit status 2, naming what is wrong."""
    answer = cli.run(*args)

    assert answer.status == 2
    assert says in answer.stderr


def test_the_command_line_exit_statuses(redis_url: str, tmp_path: Path) -> None:
    """Run as a program, `cogworker` exits 0 on success, 1 on not found, 2 on bad usage."""
    flag = ["--redis-url", redis_url]

    done, lines = run_to_exit(tmp_path, "stats", *flag)
    not_found, _ = run_to_exit(tmp_path, "delete", "nosuchjid", *flag)
    usage, _ = run_to_exit(tmp_path, "resume", *flag)

    assert (done, not_found, usage) == (0, 1, 2)
    assert lines[0].split() == ["STAT", "VALUE"]
