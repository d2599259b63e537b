"""What a settlement says when it finds its job gone from this process's in-progress list.

Two things take a job off that list behind a live process's back: another
process judged this one gone and requeued its jobs (an orphan recovery), or
Redis lost its data (a FLUSHALL, a restart without persistence, a failover
to an empty replica).  Nothing is written for such a run either way; the
epoch watch says once, at WARNING, when it was a loss of data.
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
