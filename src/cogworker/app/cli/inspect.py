"""`cogworker stats`, `queues`, `ps` and `jobs ...`: what the dashboard's Overview, Queues,
Workers and set pages show, read through the same store."""

from __future__ import annotations

from typing import Any

import click

from cogworker.adapters.codec import unstructured, unstructured_in_full
from cogworker.app.cli.output import JOB_HEADERS, answer, job_document, job_row, table, warn
from cogworker.app.cli.session import Session, inspecting
from cogworker.app.cli.settings import Decorated
from cogworker.app.web import paging
from cogworker.app.web.cards import ProcessCard, stale_after
from cogworker.app.web.entries import Filter, JobView
from cogworker.app.web.format import kib, relative, span
from cogworker.app.web.sets import KINDS

#: `cogworker jobs NAME` -> the set page's slug.
SETS = {"retry": "retries", "dead": "dead", "scheduled": "scheduled"}
#: The most jobs one listing shows (a page of the dashboard shows 100).
MAX_LIMIT = 1_000


@click.command()
@inspecting
def stats(session: Session) -> bool:
    """The Overview's numbers: processed, failed, busy, enqueued, the sets' sizes, processes."""
    counts = session.store.counts()
    warn(counts.problems)
    document = unstructured(counts)
    document.pop("problems", None)
    answer(session.as_json, document, table(("STAT", "VALUE"), list(document.items())))
    return True


@click.command()
@inspecting
def queues(session: Session) -> bool:
    """Every queue with its size, latency (how long its oldest job has waited), whether it
    is paused, and its jobs' runs counted on it (processed, failed); as JSON, every queue
    with the same keys, as `/api/stats` gives them."""
    loads = session.store.queues.loads(session.store.now())
    warn([f"queue {load.name}: {load.problem}" for load in loads if load.problem])
    rows = [
        (load.name, load.size, span(load.latency), "paused" if load.paused else "",
         load.processed, load.failed)
        for load in loads
    ]  # fmt: skip
    headers = ("QUEUE", "SIZE", "LATENCY", "STATE", "PROCESSED", "FAILED")
    answer(session.as_json, unstructured_in_full(loads), table(headers, rows))
    return True


@click.command()
@inspecting
def ps(session: Session) -> bool:
    """The worker processes: busy threads of their concurrency, memory, last heartbeat, state."""
    store = session.store
    now = store.now()
    stale = stale_after(session.config.heartbeat_interval)
    cards = [ProcessCard.of(info, (), now, stale) for info in store.processes.infos()]
    warn([f"{card.identity}: {problem}" for card in cards for problem in card.problems])
    rows = [
        (
            card.identity,
            f"{card.busy}/{card.concurrency}",
            kib(card.rss_kb),
            relative(card.beat, now),
            _state(card),
            card.queues,
        )
        for card in cards
    ]
    headers = ("IDENTITY", "BUSY", "RSS", "LAST BEAT", "STATE", "QUEUES")
    answer(session.as_json, [_process_document(card) for card in cards], table(headers, rows))
    return True


def _state(card: ProcessCard) -> str:
    """What a process is doing as `ps` says it: stopping, quiet, stale (no recent beat), running."""
    flags = [name for name, on in (("stopping", card.stopping), ("quiet", card.quiet)) if on]
    return ",".join([*flags, *(["stale"] if card.stale else [])]) or "running"


def _process_document(card: ProcessCard) -> dict[str, Any]:
    document = unstructured(card)
    document.pop("spark", None)
    return {**document, "state": _state(card)}


def _filter_options(command: Decorated) -> Decorated:
    """The filters of the dashboard's set pages, and how many jobs to list."""
    for option in (
        click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=25, show_default=True),
        click.option("--error", default="", help="Only jobs whose error contains this (any case)."),
        click.option("--jid", default="", help="Only the job with this jid."),
        click.option("--class", "class_name", default="", help="Only classes containing this."),
    ):
        command = option(command)
    return command


@click.group()
def jobs() -> None:
    """List the jobs of the retry, dead or scheduled set, or of a queue (filtered)."""


def _set_listing(name: str) -> click.Command:
    """`cogworker jobs NAME` for one of the sets."""
    kind = KINDS[SETS[name]]

    @click.option("--queue", default="", help="Only jobs of this queue.")
    @_filter_options
    @inspecting
    def listing(session: Session, limit: int, queue: str, **where: str) -> bool:
        found = paging.page_of(
            session.store.sets,
            kind.name,
            descending=kind.descending,
            cursor=None,
            where=Filter(queue=queue, **where),
            per=limit,
        )
        total = session.store.sets.total(kind.name)
        if found.limited:
            warn([f"looked at {found.scanned:,} of {total:,} entries: more may match"])
        _list(session, found.rows, total)
        return True

    order = "the newest first" if kind.descending else "the next due first"
    return click.command(name=name, help=f"The jobs of the {kind.title} set, {order}.")(listing)


for _name in SETS:
    jobs.add_command(_set_listing(_name))


@jobs.command(name="queue")
@click.argument("name")
@_filter_options
@inspecting
def queue_jobs(session: Session, name: str, limit: int, **where: str) -> bool:
    """The jobs of queue NAME, the next to run first."""
    queues = session.store.queues
    where_filter = Filter(**where)
    depth = paging.SCAN_LIMIT if where_filter.active else limit
    found = queues.page(name, 0, depth)
    if found.problem is not None:
        warn([found.problem])
        return False
    if not found.size and name not in queues.names():
        warn([f"no queue {name!r}"])
        return False
    views = [JobView.of(raw) for raw in found.entries]
    _list(session, [view for view in views if where_filter.matches(view)][:limit], found.size)
    return True


def _list(session: Session, views: list[JobView] | tuple[JobView, ...], total: int | None) -> None:
    document = {"total": total, "jobs": [job_document(view) for view in views]}
    now = session.store.now()
    text = table(JOB_HEADERS, [job_row(view, now) for view in views])
    answer(session.as_json, document, f"{text}\n({len(views):,} shown of {total or 0:,})")
