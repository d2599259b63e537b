"""What a settlement says when it finds its job gone from this process's in-progress list.

Two things take a job off that list behind a live process's back: another
process judged this one gone and requeued its jobs (an orphan recovery), or
Redis lost its data (a FLUSHALL, a restart without persistence, a failover
to an empty replica).  Nothing is written for such a run either way; the
epoch watch says once, at WARNING, when it was a loss of data.

An ack whose write failed (Redis away) is kept for a later pass, and
the job stays on the list meanwhile, so a crash makes it an orphan.  A
failover that lost the job's fetch too put it back on its queue on the
promoted replica: it runs again, and the late ack finds it gone (above).
"""

from __future__ import annotations

import logging

from cogworker.app.worker.periodic_watch import EpochWatch

#: Why a run's outcome finds its job gone.
_TAKEN = "recovered by another process as an orphan, or gone with Redis's data"


def report_lost_ownership(
    logger: logging.Logger,
    watch: EpochWatch | None,
    jid: str,
    class_name: str,
    *,
    late: bool = False,
) -> None:
    """Log that a run's outcome (written `late`, after its first write failed) found its job
    gone, after asking whether Redis lost its data."""
    if watch is not None:
        watch.check()
    why = _TAKEN
    if late:  # the first write may have landed, only its reply lost
        why = (
            "its first write landed before the connection dropped, or it was "
            f"{_TAKEN}: then it runs again"
        )
    logger.warning(
        "the job was no longer on this process's in-progress list (%s); nothing written for "
        "this run",
        why,
        extra={"jid": jid, "class": class_name, "reason": "lost-ownership"},
    )


def report_ack_interrupted(logger: logging.Logger, error: Exception, jids: list[str]) -> None:
    """Log that the acks of `jids` (finished jobs) couldn't be written, and what follows."""
    one = len(jids) == 1
    logger.error(
        "couldn't acknowledge %s (%s); will ack %s when Redis answers again (a failover that "
        "lost %s fetch may run %s again: then logged as lost-ownership)",
        "a finished job" if one else f"{len(jids)} finished jobs",
        error,
        *(("it", "its", "it") if one else ("them", "their", "them")),
        extra={"reason": "ack-interrupted", **({"jid": jids[0]} if one else {})},
    )
