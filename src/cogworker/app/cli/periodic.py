"""`cogworker periodic remove NAME...|--all`: the Periodic page's Remove buttons.

What runs is the schedule in Redis.  A worker's start-up writes its config's
periodic jobs there (replacing the others, or merged with
`periodic_replace=False`), but a config without periodic jobs leaves it
alone: an entry of an app no longer deployed (the guide's cron example, say)
keeps enqueueing on every later app's workers until removed.
Removing takes the entry off (`PeriodicStore.remove`); a run in flight goes
on, and a process whose config still lists the job adds it back at its next
start.  Exit 1 if a name isn't in the schedule (or it is empty, with --all).
"""

from __future__ import annotations

import click

from cogworker.adapters.periodic_store import PeriodicStore
from cogworker.app.cli.output import answer, table, warn
from cogworker.app.cli.session import Session, inspecting


@click.group()
def periodic() -> None:
    """The periodic schedule in Redis (which every worker runs)."""


@periodic.command()
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option("--all", "every", is_flag=True, help="Every entry of the schedule.")
@inspecting
def remove(session: Session, names: tuple[str, ...], every: bool) -> bool:
    """Take periodic jobs off the schedule: no worker enqueues them any more (a run in
    flight goes on; an app whose config lists one puts it back when it starts)."""
    if every == bool(names):
        raise click.UsageError("name one or more NAME, or give --all (not both)")
    store = PeriodicStore(session.redis)
    targets = sorted(store.schedule()) if every else list(dict.fromkeys(names))
    if not targets:
        warn(["the periodic schedule is empty"])
        return False
    removed = set(store.remove(targets))
    rows = [(name, "removed" if name in removed else "not found") for name in targets]
    document = [{"name": name, "removed": name in removed} for name in targets]
    answer(session.as_json, document, table(("NAME", "OUTCOME"), rows))
    return len(removed) == len(targets)
