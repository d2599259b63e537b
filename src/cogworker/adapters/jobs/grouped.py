"""A batch's plain outcomes of one queue, settled in one script call (ack_many.lua,
retry_many.lua): each job's own keys are written per job, its queue's counters, its
class's history trims and metrics once per call.

A plain ack is any success but a periodic job's or a batch member's: it writes its
counters and its class's history, and its status, its run in its own history and the
release of its unique lock when it has them; a plain retry also files the job in its
queue's retry set with its jid index entry, its attempt and its run in its own history
(`OutcomeRecord.is_plain_ack`, `is_plain_retry`).  Every other outcome is a `settle`
call of its own (see `adapters.jobs.settle`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.jobs.outcome import OutcomeKind
from cogworker.adapters.jobs.retention import DAY_COUNTER_TTL, Retention
from cogworker.adapters.jobs.run_figures import metrics_args, metrics_keys
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.redis_client import RedisPipeline
from cogworker.adapters.results import result_args, result_key
from cogworker.domain.stats import day_of

KeyOrArg = bytes | str | int | float
#: Indexes of a batch's orders by what one call settles them: (their kind, their queue).
Groups = dict[tuple[OutcomeKind, str], list[int]]


def groups_of(orders: Sequence[SettleOrder]) -> tuple[Groups, list[int]]:
    """The indexes of `orders`' plain acks and plain retries by (kind, queue), and of
    the others (each a `settle` of its own), in order."""
    grouped: Groups = {}
    others: list[int] = []
    for i, order in enumerate(orders):
        outcome = order.outcome
        if outcome.is_plain_ack or outcome.is_plain_retry:
            grouped.setdefault((outcome.kind, order.fetched.queue), []).append(i)
        else:
            others.append(i)
    return grouped, others


def queue_group(
    pipe: RedisPipeline,
    kind: OutcomeKind,
    holder: str,
    owned: bool,
    orders: Sequence[SettleOrder],
    now: float,
    kept: Retention,
    refreshes: Collection[tuple[str, str]],
) -> None:
    """Queue one call settling `orders`, plain outcomes of `kind` of one queue's jobs, taken
    off the list `holder` (checked only when `owned`)."""
    queue = orders[0].fetched.queue
    if kind == "ack":
        _queue_acks(pipe, holder, owned, queue, orders, now, kept, refreshes)
    else:
        _queue_retries(pipe, holder, owned, queue, orders, now, kept, refreshes)


def _queue_acks(
    pipe: RedisPipeline,
    holder: str,
    owned: bool,
    queue: str,
    acks: Sequence[SettleOrder],
    now: float,
    kept: Retention,
    refreshes: Collection[tuple[str, str]],
) -> None:
    """Queue one `ack_many` of `acks`, plain acks of jobs of `queue`."""
    day = day_of(now)
    ack_keys = [holder, keys.stat(queue, "processed"), keys.stat(queue, "processed", day)]
    ack_args: list[KeyOrArg] = [
        "1" if owned else "0",
        DAY_COUNTER_TTL,
        kept.history_per_class,
        int(kept.history_ttl),
        now,
        int(kept.metrics_ttl),
        kept.history_per_job,
        int(kept.status_ttl),
    ]
    unused = keys.no_lock(queue)
    for ack in acks:
        outcome = ack.outcome
        own_history = outcome.history_per_job and outcome.history != ""
        releases = outcome.unique_action == "release"
        ack_keys += (
            keys.orphanings(queue, outcome.jid),
            keys.handbacks(queue, outcome.jid),
            keys.class_history(queue, outcome.class_name),
            *metrics_keys(outcome.class_name, outcome.sample, now, queue),
            result_key(outcome.jid, outcome.result, queue),
            outcome.limit_place or unused,
            keys.history(queue, outcome.jid) if own_history else unused,
            keys.status(queue, outcome.jid) if outcome.status else unused,
            outcome.unique_lock if releases else unused,
        )
        ack_args += (ack.fetched.raw, outcome.history, outcome.class_name)
        ack_args += metrics_args(outcome, refreshes)
        ack_args += (*result_args(outcome.result), outcome.jid if outcome.limit_place else "")
        ack_args += ("1" if own_history else "0", outcome.status, outcome.jid if releases else "")
    scripts.ACK_MANY.queue(pipe, ack_keys, ack_args)


def _queue_retries(
    pipe: RedisPipeline,
    holder: str,
    owned: bool,
    queue: str,
    retries: Sequence[SettleOrder],
    now: float,
    kept: Retention,
    refreshes: Collection[tuple[str, str]],
) -> None:
    """Queue one `retry_many` of `retries`, plain retries of jobs of `queue`."""
    day = day_of(now)
    retry_keys = [
        holder,
        keys.retry(queue),
        keys.stat(queue, "processed"),
        keys.stat(queue, "processed", day),
        keys.stat(queue, "failed"),
        keys.stat(queue, "failed", day),
        keys.located(queue),
    ]
    retry_args: list[KeyOrArg] = [
        "1" if owned else "0",
        DAY_COUNTER_TTL,
        kept.attempts_kept,
        int(kept.attempts_ttl),
        kept.history_per_job,
        kept.history_per_class,
        int(kept.history_ttl),
        now,
        int(kept.metrics_ttl),
    ]
    for retry in retries:
        outcome = retry.outcome
        retry_keys += (
            keys.orphanings(queue, outcome.jid),
            keys.handbacks(queue, outcome.jid),
            keys.job_attempts(queue, outcome.jid),
            keys.history(queue, outcome.jid),
            keys.class_history(queue, outcome.class_name),
            *metrics_keys(outcome.class_name, outcome.sample, now, queue),
            outcome.limit_place or keys.no_lock(queue),
        )
        retry_args += (retry.fetched.raw, outcome.jid, outcome.score, outcome.payload)
        retry_args += (outcome.attempt, outcome.history, "1" if outcome.history_per_job else "0")
        retry_args += (outcome.class_name, *metrics_args(outcome, refreshes))
        retry_args.append("release" if outcome.limit_place else "")
    scripts.RETRY_MANY.queue(pipe, retry_keys, retry_args)
