"""A job's own output on a real worker: its `logging` lines in the worker's format with
its jid and class, an app's own logging configuration left alone, and lines printed by
many jobs at once never mixed mid-line."""

from __future__ import annotations

import json
import re
import string
from typing import Any

import cogworker
from tests.app.helpers import Workers
from tests.app.output_jobs import LINE_LENGTH, PrintLines, Speak
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerProcess, wait_until


def lines_with(worker: CogworkerProcess, text: str, count: int) -> list[str]:
    """The worker's log lines holding `text`, once there are `count` of them."""

    def found() -> list[str] | None:
        lines = [line for line in worker.log_text().splitlines() if text in line]
        return lines if len(lines) >= count else None

    return wait_until(
        found,
        30.0,
        message=lambda: f"fewer than {count} lines with {text!r}; log:\n{worker.log_tail()}",
    )


def test_a_jobs_log_lines_come_out_in_the_workers_format_with_its_jid(
    workers: Workers, client: cogworker.Client, kind: Kind
) -> None:
    """`logger.info` in a job is shown (at INFO, the worker's level), and `.warning` is no
    bare line: both carry the time, the level, the job's jid and class, and the logger."""
    job_class = of_kind(Speak, kind)
    worker = workers.start()
    jid = client.enqueue(job_class, "t1")

    [info] = lines_with(worker, "info from the job t1", 1)
    [warning] = lines_with(worker, "warning from the job t1", 1)

    timestamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
    assert re.match(rf"{timestamp} INFO info from the job t1 ", info), info
    assert re.match(rf"{timestamp} WARNING warning from the job t1 ", warning), warning
    for line in (info, warning):
        assert f"jid={jid}" in line
        assert f"class={job_class.class_path()}" in line
        assert "logger=tests.app.output_jobs" in line


def test_a_jobs_log_lines_are_json_under_the_json_format(
    workers: Workers, client: cogworker.Client, kind: Kind
) -> None:
    """With `--log-format json` every line the worker writes, the job's too, is JSON."""
    job_class = of_kind(Speak, kind)
    worker = workers.start(extra_args=["--log-format", "json"])
    jid = client.enqueue(job_class, "t2")

    lines_with(worker, "warning from the job t2", 1)

    records: list[dict[str, Any]] = [json.loads(line) for line in worker.log_text().splitlines()]
    [info] = [record for record in records if record["msg"] == "info from the job t2"]
    assert info["level"] == "INFO"
    assert info["jid"] == jid
    assert info["class"] == job_class.class_path()
    assert info["logger"] == "tests.app.output_jobs"


def test_a_root_logger_the_app_configured_is_left_alone(
    workers: Workers, client: cogworker.Client
) -> None:
    """An APP that configured logging itself keeps its handler and format: the job's lines
    come out once, as the app said, not also in the worker's format (sync only: the kind
    can't change who owns the root logger)."""
    worker = workers.start("tests.app.own_logging_app")
    client.enqueue(Speak, "t3")

    lines_with(worker, "OWN WARNING warning from the job t3", 1)

    assert "OWN INFO info from the job t3" in worker.log_text()
    assert worker.log_text().count("from the job t3") == 2


def test_lines_printed_by_twenty_jobs_at_once_stay_whole(
    workers: Workers, client: cogworker.Client
) -> None:
    """With `-c 20`, every long line each job prints comes out whole, on a line of its own
    (sync only: the threads are what print at once; async jobs share one)."""
    tags = [f"{letter}job" for letter in string.ascii_letters[:40]]
    lines_each = 30
    worker = workers.start(concurrency=20)
    client.enqueue_many(PrintLines, [[tag, lines_each] for tag in tags])

    printed = lines_with(worker, "P:", len(tags) * lines_each)

    whole = re.compile(rf"P:((\w)job):\d+:\2{{{LINE_LENGTH}}}")
    mixed = [line[:80] for line in printed if not whole.fullmatch(line)]
    assert not mixed, f"{len(mixed)} lines mixed, e.g. {mixed[:3]}"
    assert len(set(printed)) == len(tags) * lines_each
