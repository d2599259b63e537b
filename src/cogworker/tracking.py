"""Reading what the engine records: statuses, attempts, run history, live work,
memory history and the counters.  Each read is one round trip to the Redis given, or
two where it merges the queues' shares (the counters, a class's runs) or reads a job's
records by jid (its queue first, from the jid index; three when the index is missing).

::

    import cogworker
    from cogworker import tracking

    redis = cogworker.Client(config).redis
    for attempt in tracking.attempts(redis, jid):
        print(attempt.attempt, attempt.outcome, attempt.error_class)
"""

from cogworker.adapters.tracking import (
    QueueLoad,
    attempts,
    class_history,
    daily_counts,
    history,
    memory_series,
    queues,
    running_work,
    status,
    totals,
)
from cogworker.domain.records import AttemptRecord, RunRecord

__all__ = [
    "AttemptRecord",
    "QueueLoad",
    "RunRecord",
    "attempts",
    "class_history",
    "daily_counts",
    "history",
    "memory_series",
    "queues",
    "running_work",
    "status",
    "totals",
]
