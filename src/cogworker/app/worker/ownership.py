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


def report_lost_ownership(
    logger: logging.Logger, watch: EpochWatch | None, jid: str, class_name: str
) -> None:
    """Log that a run's outcome found its job gone, after asking whether Redis lost its data."""
    if watch is not None:
        watch.check()
    logger.warning(
        "the job was no longer on this process's in-progress list (recovered by another "
        "process as an orphan, or gone with Redis's data); nothing written for this run",
        extra={"jid": jid, "class": class_name, "reason": "lost-ownership"},
    )
