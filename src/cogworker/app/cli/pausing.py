"""`cogworker pause|unpause QUEUE...`: the Queues page's Pause and Resume buttons.

Named `unpause`, not `resume`: `cogworker resume` lets quiet *processes*
take jobs again (signals.py).  A pause goes through the dashboard's store
(`QueueStore.set_paused`); every worker stops taking the queue's jobs from
its next fetch on.  Asking for the state a queue is already in is no
failure: the answer says so and the exit status is 0.
"""

from __future__ import annotations

import click

from cogworker.app.cli.output import answer, table
from cogworker.app.cli.session import Session, inspecting
from cogworker.domain.queues import checked_name

#: For each command: whether it pauses, and what its answer says of a queue it changed or not.
OUTCOMES = {
    "pause": (True, "paused", "already paused"),
    "unpause": (False, "resumed", "not paused"),
}


def _pause_command(name: str, summary: str) -> click.Command:
    """`cogworker NAME QUEUE...`."""
    pausing, changed_text, unchanged_text = OUTCOMES[name]

    @click.argument("queues", nargs=-1, required=True, metavar="QUEUE...")
    @inspecting
    def command(session: Session, queues: tuple[str, ...]) -> bool:
        for queue in queues:  # every one checked before any is changed
            try:
                checked_name(queue)
            except ValueError as error:
                raise click.BadParameter(str(error), param_hint="QUEUE") from None
        store = session.store.queues
        changed = [store.set_paused(queue, paused=pausing) for queue in queues]
        rows = [
            (queue, changed_text if did else unchanged_text)
            for queue, did in zip(queues, changed, strict=True)
        ]
        document = [
            {"queue": queue, "changed": did} for queue, did in zip(queues, changed, strict=True)
        ]
        answer(session.as_json, document, table(("QUEUE", "OUTCOME"), rows))
        return True

    return click.command(name=name, help=summary)(command)


pause = _pause_command(
    "pause",
    "Stop every worker taking jobs from QUEUEs (from its next fetch; running jobs finish). "
    "Enqueues still land on them.",
)
unpause = _pause_command("unpause", "Let workers take jobs from paused QUEUEs again.")
