"""An APP for the CLI tests (`--app tests.app.cli_app`): its death handler notes what it is
given, in this process (the CLI tests run the commands in-process)."""

from __future__ import annotations

import cogworker

#: (jid, exception type name, message) of every call of `record_death`.
DEATHS: list[tuple[str, str, str]] = []


def record_death(job: dict[str, object], exception: BaseException) -> None:
    """Note the job's jid and the exception a death handler was given."""
    DEATHS.append((str(job.get("jid")), type(exception).__name__, str(exception)))


config = cogworker.Config(death_handlers=(record_death,))
