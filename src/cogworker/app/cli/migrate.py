"""`cogworker migrate [--dry-run]`: bring the keys of an older layout to this code's.

The steps are `domain.layout.STEPS`; `cogworker:layout` says how many a
Redis has had.  The missing ones apply in order (`domain.layout.plan`),
each key moved by one script (`adapters.layout_store`), the number raised
after each step: a run cut short anywhere is finished by running it again,
and a run on a Redis already migrated moves nothing but the old keys an
older release wrote again since.  Workers of either release must be stopped
first: an older one would go on writing the old keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from cogworker.adapters import layout_index, layout_rewrite, layout_split
from cogworker.adapters.layout_store import KeyReport, LayoutStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.adapters.redis_client import is_cluster
from cogworker.app.cli.output import answer, table
from cogworker.app.cli.session import Session, inspecting
from cogworker.domain import layout, layout_verdicts
from cogworker.domain.layout import Planned, Step

#: The columns of a migration's answer, one row per key.
HEADERS = ("STEP", "OLD KEY", "TYPE", "ENTRIES", "NEW KEY", "DONE")


@click.command()
@click.option("--dry-run", is_flag=True, help="Print what would move; write nothing.")
@inspecting
def migrate(session: Session, dry_run: bool) -> bool:
    """Move the keys of an older cogworker layout to this release's (stop the workers first)."""
    store = LayoutStore(session.redis)
    stored = store.stored()
    latest = layout.current()
    if stored is not None and stored > latest:
        click.echo(
            f"cogworker: {layout_verdicts.Newer(stored=stored, current=latest).problem}", err=True
        )
        return False
    found = store.found()
    planned = layout.plan(stored or 0, found)
    if not dry_run and planned and not _workers_stopped(session):
        return False
    if dry_run:
        rows = [(each.step, report) for each in planned for report in _reports(store, each)]
        moved: list[str] = []
    elif is_cluster(store.client) and planned:
        if not _admitted_on_cluster(store, found):
            return False
        rows, moved = [], []
    else:
        rows, moved = _apply(store, planned)
    after = stored if dry_run else store.stored()
    answer(
        session.as_json,
        _document(stored, after, dry_run, rows, moved),
        _text(stored, after, dry_run, rows, moved),
    )
    return True


def _admitted_on_cluster(store: LayoutStore, found: frozenset[str]) -> bool:
    """On a Redis Cluster, write this code's layout number if no old key is there (what a
    worker's start does); refuse if one is: a move between an old and a new name spans
    slots, which a cluster refuses."""
    if found:
        example = sorted(found)[0]
        click.echo(
            f"cogworker: keys of an older layout ({len(found)}, e.g. {example}) are on this "
            "Redis Cluster: `cogworker migrate` moves keys between slots, which a cluster "
            "refuses. Migrate on a single node, then move the keys (docs/redis-cluster.md).",
            err=True,
        )
        return False
    store.applied(layout.STEPS[-1])  # nothing to move: the number only
    return True


def _workers_stopped(session: Session) -> bool:
    """Whether no worker beats any more (within the orphan threshold); if one does, say so."""
    beats, now = ProcessRegistry(session.redis).beats()
    running = layout_verdicts.still_beating(beats, now, session.config.orphan_threshold)
    if running:
        click.echo(
            f"cogworker: stop the workers first: {len(running)} still beating "
            f"({', '.join(running)})",
            err=True,
        )
    return not running


def _reports(store: LayoutStore, planned: Planned) -> list[KeyReport]:
    """A step's renames, then its rewrites (the entries to rewrite in the keys that exist
    now: a dry run can't see those an earlier step's renames will bring), then its splits
    (likewise: the entries the old sets hold now), then the sets whose entries it indexes.
    A migration reports each step just before applying it."""
    rewrites = [layout_rewrite.report(store.client, rewrite) for rewrite in planned.rewrites]
    splits = [layout_split.report(store.client, split) for split in planned.splits]
    indexes = [layout_index.report(store.client, name) for name in planned.indexes]
    return [*store.report(planned.renames), *rewrites, *splits, *indexes]


def _apply(
    store: LayoutStore, planned: Sequence[Planned]
) -> tuple[list[tuple[Step, KeyReport]], list[str]]:
    """Apply the plan in order, each step's keys moved, its entries rewritten or moved to
    their queues' sets, and then the step noted; each key's (or rewrite's) report, made
    just before its step (so it sees what the earlier steps moved), and its result."""
    rows: list[tuple[Step, KeyReport]] = []
    results = []
    for each in planned:
        rows += [(each.step, report) for report in _reports(store, each)]
        results += [store.move(rename) for rename in each.renames]
        results += [
            f"rewrote {layout_rewrite.rewrite_all(store.client, rewrite)}"
            for rewrite in each.rewrites
        ]
        results += [f"moved {layout_split.split_all(store.client, split)}" for split in each.splits]
        results += [
            f"indexed {layout_index.index_all(store.client, name)}" for name in each.indexes
        ]
        store.applied(each.step)
    return rows, results


def _document(
    before: int | None,
    after: int | None,
    dry_run: bool,
    rows: Sequence[tuple[Step, KeyReport]],
    moved: Sequence[str],
) -> dict[str, Any]:
    keys = [
        {"step": step.number, "old": report.old, "new": report.new, "type": report.kind,
         "entries": report.entries, **({"done": moved[index]} if moved else {})}
        for index, (step, report) in enumerate(rows)
    ]  # fmt: skip
    return {"layout": before, "current": layout.current(), "after": after, "dry_run": dry_run,
            "keys": keys}  # fmt: skip


def _text(
    before: int | None,
    after: int | None,
    dry_run: bool,
    rows: Sequence[tuple[Step, KeyReport]],
    moved: Sequence[str],
) -> str:
    """The rows under `HEADERS` (DONE: "would move" in a dry run), then what the layout is."""
    if not rows and before == after:
        return f"layout {after}: up to date, nothing to move"
    done = moved or ["would move" if report.kind != "none" else "absent" for _, report in rows]
    cells = [
        (step.number, report.old, report.kind, report.entries, report.new, result)
        for (step, report), result in zip(rows, done, strict=True)
    ]
    summary = (
        f"dry run: layout {before or 0} would become {layout.current()}; nothing written"
        if dry_run
        else f"layout {before or 0} -> {after}"
    )
    return f"{table(HEADERS, cells)}\n{summary}"
