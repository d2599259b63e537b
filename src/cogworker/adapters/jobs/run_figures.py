"""A run's figures as the settling scripts take them (settle.lua, ack_many.lua): the
keys of its class's metrics on its queue, and its time, bucket and refresh flag
(`adapters.class_metrics` reads them back)."""

from __future__ import annotations

from collections.abc import Collection

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.domain.class_metrics import RunSample, hour_of, minute_of


def metrics_keys(
    class_name: str, sample: RunSample | None, now: float, queue: str
) -> tuple[str, ...]:
    """Where a run's figures go at `now`: its class's minute, hour and total hashes on its
    queue, and the queue's registry of classes (placeholders in the slot of `queue`, the
    script's, when it isn't counted)."""
    if sample is None:
        return (keys.no_lock(queue),) * 4
    queue = sample.queue
    return (
        keys.metrics_minute(queue, class_name, minute_of(now)),
        keys.metrics_hour(queue, class_name, hour_of(now)),
        keys.metrics_total(queue, class_name),
        keys.metrics_classes(queue),
    )


def metrics_args(
    outcome: OutcomeRecord, refreshes: Collection[tuple[str, str]]
) -> tuple[str | int, str | int, str]:
    """A run's figures as the scripts take them: its time (microseconds), its bucket, and
    "1" if its class's lasting metrics are due for a refresh; "" when it isn't counted."""
    sample = outcome.sample
    if sample is None:
        return "", "", "0"
    refresh = (sample.queue, outcome.class_name) in refreshes
    return sample.micros, sample.bucket, "1" if refresh else "0"
