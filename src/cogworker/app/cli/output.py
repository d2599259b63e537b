"""How the inspecting commands answer: aligned tables for people, one JSON document for
scripts.  Text from Redis (job arguments, errors, names) is shown with its control
characters escaped, so an entry can't move the cursor or recolour the terminal."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from cogworker.app.web.entries import JobView, clip
from cogworker.app.web.format import relative, visible_controls

#: Characters of a job's arguments or error shown in a table cell.
CELL_CHARS = 60
#: Spaces between table columns.
GAP = "  "


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """`rows` under `headers`, each column as wide as its widest cell (the last unpadded)."""
    cells = [list(headers), *([cell_text(cell) for cell in row] for row in rows)]
    widths = [max(len(row[column]) for row in cells) for column in range(len(headers))]
    lines = [
        GAP.join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in cells
    ]
    return "\n".join(line.rstrip() for line in lines)


def cell_text(value: object) -> str:
    """A value as a table shows it: n/a for None, thousands separated, controls escaped."""
    if value is None:
        return "n/a"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return visible_controls(str(value))


def answer(as_json: bool, document: object, text: str) -> None:
    """Print `document` as JSON, or `text` for people."""
    click.echo(json.dumps(document, ensure_ascii=False, default=repr) if as_json else text)


def warn(problems: Sequence[str]) -> None:
    """Say on stderr what couldn't be read (left out of the answer)."""
    for problem in problems:
        click.echo(f"cogworker: {visible_controls(problem)}", err=True)


def job_document(view: JobView) -> dict[str, Any]:
    """An entry as JSON: the job's fields, or (`raw`) the entry as stored if it isn't one."""
    document: dict[str, Any] = {"jid": view.jid, "class": view.class_name, "queue": view.queue}
    if view.score is not None:
        document["at"] = view.score
    if view.job is None:
        return {**document, "raw": view.args_text, "problem": view.problem}
    job = view.job
    return {
        **document,
        "args": list(job.args),
        "enqueued_at": job.enqueued_at,
        "retry_count": job.retry_count,
        "error": view.error_text or None,
    }


#: The columns of a list of jobs.
JOB_HEADERS = ("WHEN", "JID", "CLASS", "QUEUE", "ARGS", "ERROR")


def job_row(view: JobView, now: float) -> tuple[str, ...]:
    """An entry as a row under `JOB_HEADERS` (WHEN: its set's time, else when enqueued)."""
    when = view.score if view.score is not None else (view.job and view.job.enqueued_at)
    return (
        relative(when, now),
        view.jid or view.key,
        view.class_name,
        view.queue,
        clip(view.args_text, CELL_CHARS),
        clip(view.error_text, CELL_CHARS),
    )
