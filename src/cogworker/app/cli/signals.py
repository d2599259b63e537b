"""`cogworker quiet|resume|stop IDENTITY...|--all`: the Workers page's buttons.

The signal goes through the dashboard's store (`ProcessStore.signal`), which
pushes it on the process's signal list; the process acts on it at its next
heartbeat.  Exit 1 if a process named isn't registered (or none is, with --all).
"""

from __future__ import annotations

import click

from cogworker.app.cli.output import answer, table, warn
from cogworker.app.cli.session import Session, inspecting

#: What each signal did, as the answer says it.
SENT = {"quiet": "quieted", "resume": "resumed", "stop": "stopping"}


def _signal_command(signal: str, summary: str) -> click.Command:
    """`cogworker SIGNAL IDENTITY...|--all`."""

    @click.argument("identities", nargs=-1, metavar="IDENTITY...")
    @click.option("--all", "every", is_flag=True, help="Every registered process.")
    @inspecting
    def command(session: Session, identities: tuple[str, ...], every: bool) -> bool:
        if every == bool(identities):
            raise click.UsageError("name one or more IDENTITY, or give --all (not both)")
        processes = session.store.processes
        targets = processes.identities() if every else list(identities)
        if not targets:
            warn(["no process is registered"])
            return False
        sent = {identity: processes.signal(identity, signal) for identity in targets}
        said = {identity: SENT[signal] if ok else "not registered" for identity, ok in sent.items()}
        document = [{"identity": identity, "sent": sent[identity]} for identity in targets]
        answer(session.as_json, document, table(("IDENTITY", "OUTCOME"), list(said.items())))
        return all(sent.values())

    return click.command(name=signal, help=summary)(command)


quiet = _signal_command(
    "quiet", "Stop processes taking new jobs (they finish what they run, and keep beating)."
)
resume = _signal_command("resume", "Let quiet processes take jobs again.")
stop = _signal_command(
    "stop", "Shut processes down as SIGTERM does: finish or hand back their jobs, then exit."
)
