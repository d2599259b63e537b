"""Marks a run leaves for its recovery: a cancel sent to the process running it, a hard
time limit that process's pulse enforced by ending it (`app.worker.pulse_beater`).

They are read only when a gone process's runs are recovered
(`app.worker.marked_ends`), so a plain job's run costs no command for them.
Both live in the job's queue's slot, next to its orphanings counter, and
expire as it does.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.retention import ORPHANINGS_TTL
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes

#: How long a mark waits for the recovery of its run (as an orphanings counter does).
MARK_TTL = ORPHANINGS_TTL


@attrs.frozen(kw_only=True)
class HardTimeout:
    """What a pulse wrote of a run it ended past its hard limit."""

    started_at: float
    timeout: float
    grace: float


@attrs.frozen(kw_only=True)
class RunMarks:
    """The marks one job's run carries."""

    cancelled: bool = False
    hard_timeout: HardTimeout | None = None


def hard_timeout_value(started_at: float, timeout: float, grace: float) -> str:
    """The text a hard-timeout mark holds (the pulse writes it as it was handed)."""
    return f"{started_at!r},{timeout!r},{grace!r}"


def parse_hard_timeout(raw: bytes | str | None) -> HardTimeout | None:
    """A hard-timeout mark's text read back; None when there is none (or it is garbled)."""
    if raw is None:
        return None
    try:
        started_at, timeout, grace = map(float, as_bytes(raw).decode().split(","))
    except ValueError:
        return None
    return HardTimeout(started_at=started_at, timeout=timeout, grace=grace)


@attrs.define
class MarkStore:
    """Run marks on one Redis."""

    client: RedisClient

    def mark_cancelled(self, queue: str, jid: str) -> None:
        """Note that `jid`'s run (a job of `queue`) was told to cancel."""
        self.client.set(keys.cancel_mark(queue, jid), "1", ex=MARK_TTL)

    def forget(self, queue: str, jid: str) -> None:
        """Delete `jid`'s marks (its marked run is filed: a later run starts unmarked)."""
        self.client.delete(keys.cancel_mark(queue, jid), keys.hard_timeout_mark(queue, jid))

    def marks_of(self, queue: str, jids: Sequence[str]) -> dict[str, RunMarks]:
        """The marks of those of `jids` (jobs of `queue`) that carry any, by jid."""
        if not jids:
            return {}
        names = [keys.cancel_mark(queue, jid) for jid in jids]
        names += [keys.hard_timeout_mark(queue, jid) for jid in jids]
        found = self.client.mget(names)  # one slot: every name is in `queue`'s
        marks: dict[str, RunMarks] = {}
        for jid, cancelled, timed_out in zip(jids, found, found[len(jids) :], strict=False):
            hard_timeout = parse_hard_timeout(timed_out)
            mark = RunMarks(cancelled=cancelled is not None, hard_timeout=hard_timeout)
            if mark != RunMarks():
                marks[jid] = mark
        return marks
