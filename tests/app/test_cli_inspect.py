"""`cogworker stats`, `queues`, `ps` and `jobs ...` against a real Redis and real workers."""

from __future__ import annotations

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.cli_runner import Cli
from tests.app.helpers import Workers, logs, wait_for_processes
from tests.app.jobs import Gate, NoRetryFalse, NoRetryZero, Record, RecordHeavy
from tests.support.processes import wait_until


def column_starts(line: str, headers: tuple[str, ...]) -> list[int]:
    """Where each header starts in a table's first line."""
    return [line.index(header) for header in headers]


def test_stats_and_queues_count_what_waits(cli: Cli, client: cogworker.Client) -> None:
    """`stats` and `queues` count the enqueued and scheduled jobs, as JSON and as aligned tables."""
    client.enqueue_many(Record, [[n] for n in range(3)])
    client.enqueue_many(RecordHeavy, [[n] for n in range(12)])
    client.enqueue_in(600, Record, "later")

    stats = cli.json("stats")
    queues = cli.json("queues")
    table = cli.run("queues")

    assert (stats["enqueued"], stats["scheduled"], stats["dead"]) == (15, 1, 0)
    assert {load["name"]: load["size"] for load in queues} == {"default": 3, "heavy": 12}
    assert table.status == 0
    header, *rows = table.lines
    starts = column_starts(header, ("QUEUE", "SIZE", "LATENCY"))
    assert [row.split()[:2] for row in rows] == [["default", "3"], ["heavy", "12"]]
    assert all(row[starts[1]] != " " and row[starts[1] - 1] == " " for row in rows)


def test_queues_as_json_gives_every_queue_the_same_keys(cli: Cli, rc: redis.Redis) -> None:
    """A queue that ran jobs and one that never did: the same keys on each (as `/api/stats`),
    the idle one at 0 processed, 0 failed, not paused, no problem."""
    rc.sadd(keys.QUEUES, "busy", "idle")
    rc.set(keys.stat("busy", "processed"), 7)
    rc.set(keys.stat("busy", "failed"), 2)

    loads = {load["name"]: load for load in cli.json("queues")}

    assert {name: sorted(load) for name, load in loads.items()} == {
        name: ["failed", "latency", "name", "paused", "problem", "processed", "size"]
        for name in ("busy", "idle")
    }
    assert (loads["busy"]["processed"], loads["busy"]["failed"]) == (7, 2)
    assert loads["idle"] == {"name": "idle", "size": 0, "latency": 0.0, "paused": False,
                             "processed": 0, "failed": 0, "problem": None}  # fmt: skip


def test_ps_shows_a_live_process_with_its_busy_threads(
    cli: Cli, rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """`ps` lists a running worker: identity, busy of concurrency, RSS, a beat, running."""
    worker = workers.start(concurrency=3)
    [identity] = wait_for_processes(rc, 1, worker)
    client.enqueue(Gate, "ps")
    wait_until(lambda: rc.scard("started") == 1, 20.0, message=lambda: logs(worker))

    [process] = wait_until(
        lambda: (found := cli.json("ps")) and found[0]["busy"] == 1 and found,
        20.0,
        message=lambda: f"ps never showed the busy thread; log:\n{logs(worker)}",
    )
    table = cli.run("ps")
    rc.set("gate:ps", 1)

    assert process["identity"] == identity
    assert (process["concurrency"], process["state"]) == (3, "running")
    assert int(process["rss_kb"]) > 0
    assert process["beat"] > 0
    assert table.lines[0].split() == ["IDENTITY", "BUSY", "RSS", "LAST", "BEAT", "STATE", "QUEUES"]
    assert table.lines[1].split()[:2] == [identity, "1/3"]


def test_jobs_of_a_set_are_filtered_as_on_the_dashboard(
    cli: Cli, rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """`jobs dead` narrows by class, error text, jid and queue, and stops at --limit."""
    jids = [str(client.enqueue(NoRetryZero, name)) for name in ("a", "b", "c")]
    other = client.enqueue(NoRetryFalse, "d")
    worker = workers.start()
    wait_until(
        lambda: rc.zcard("cogworker:{q:default}:dead") == 4, 20.0, message=lambda: logs(worker)
    )

    def listed(*filters: str) -> list[str]:
        return [job["jid"] for job in cli.json("jobs", "dead", *filters)["jobs"]]

    assert sorted(listed("--class", "noretryzero")) == sorted(jids)
    assert listed("--error", "boom ('b',)") == [jids[1]]
    assert listed("--jid", str(other)) == [other]
    assert listed("--queue", "elsewhere") == []
    assert len(listed("--limit", "2")) == 2
    [entry] = cli.json("jobs", "dead", "--jid", str(other))["jobs"]
    assert (entry["class"], entry["args"], entry["retry_count"]) == (
        "tests.app.jobs.NoRetryFalse",
        ["d"],
        1,
    )
    assert "JobBoomError: boom ('d',)" in entry["error"]


def test_jobs_scheduled_lists_the_next_due_first(cli: Cli, client: cogworker.Client) -> None:
    """`jobs scheduled` lists the scheduled set, the next due first, with its total."""
    late = client.enqueue_in(900, Record, "late")
    soon = client.enqueue_in(300, Record, "soon")

    found = cli.json("jobs", "scheduled")
    table = cli.run("jobs", "scheduled", "--limit", "1")

    assert [job["jid"] for job in found["jobs"]] == [soon, late]
    assert found["total"] == 2
    assert table.lines[0].split() == ["WHEN", "JID", "CLASS", "QUEUE", "ARGS", "ERROR"]
    assert str(soon) in table.lines[1]
    assert table.lines[-1] == "(1 shown of 2)"


def test_jobs_of_a_queue_next_first_and_an_unknown_queue_exits_1(
    cli: Cli, client: cogworker.Client
) -> None:
    """`jobs queue NAME` lists a queue the next to run first; a queue that doesn't exist is 1."""
    first, second = client.enqueue_many(RecordHeavy, [["x"], ["y"]])

    found = cli.json("jobs", "queue", "heavy")
    filtered = cli.json("jobs", "queue", "heavy", "--jid", str(second))
    missing = cli.run("jobs", "queue", "nowhere")

    assert [job["jid"] for job in found["jobs"]] == [first, second]
    assert [job["args"] for job in filtered["jobs"]] == [["y"]]
    assert missing.status == 1
    assert "no queue 'nowhere'" in missing.stderr
