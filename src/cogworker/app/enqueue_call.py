"""What both clients (`Client`, `AsyncClient`) do alike around the sending: an
enqueue's due time, its batches and their outcome, and what to raise when Redis
fails it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import redis

from cogworker.adapters import redis_access
from cogworker.adapters.replication import NotReplicatedError
from cogworker.adapters.slot_moves import refused_while_moving
from cogworker.app.config import Config
from cogworker.domain.job import JobRecord
from cogworker.exceptions import (
    EnqueueError,
    EnqueueNotReplicatedError,
    EnqueueRefusedError,
    EnqueueUnavailableError,
    RedisRefusedError,
    RedisUnavailableError,
)

#: Jobs per round trip in `enqueue_many`.
BATCH_SIZE = 1_000


def due_time(at: float | dt.datetime) -> float:
    """`at`, a unix timestamp or an aware datetime, as a unix timestamp."""
    if isinstance(at, dt.datetime):
        if at.tzinfo is None:
            raise ValueError(
                "perform_at needs an aware datetime (with tzinfo), or a unix timestamp"
            )
        return at.timestamp()
    return float(at)


def batches(jobs: Sequence[JobRecord]) -> Iterator[Sequence[JobRecord]]:
    """`jobs` in slices of `BATCH_SIZE`, one round trip each."""
    for start in range(0, len(jobs), BATCH_SIZE):
        yield jobs[start : start + BATCH_SIZE]


def with_pushed(error: EnqueueError, done: Sequence[str | None]) -> EnqueueError:
    """`error`, met by a later batch, also naming the jids the batches before it pushed."""
    return error.with_pushed([jid for jid in done if jid is not None])


def batch_outcome(
    results: Sequence[str | None], passed: Sequence[JobRecord], written: Sequence[bool]
) -> list[str | None]:
    """Per job of a batch, its jid if pushed, else None: `results` are what the middleware
    chains returned, `passed` the jobs they passed on, `written` whether each was pushed."""
    pushed = {job.jid for job, ok in zip(passed, written, strict=True) if ok}
    return [jid if jid in pushed else None for jid in results]


def enqueue_failure(
    config: Config, error: redis.RedisError | NotReplicatedError, unknown: Sequence[str]
) -> EnqueueError | None:
    """The error to raise for an enqueue that `error` stopped (or that too few replicas
    confirmed), naming the `unknown` jids; None for another error (raised as it is)."""
    if isinstance(error, NotReplicatedError):
        short = error.shortfall
        problem = (
            f"can't confirm the enqueue: {config.redis_target().described()}: {short}; "
            "it is on the primary, and runs unless a failover loses it first"
        )
        required = short.of.replicas
        return EnqueueNotReplicatedError(
            problem, unknown=unknown, reached=short.reached, required=required
        )
    failed = _failure(config, "can't enqueue", error)
    if failed is None:
        return None
    problem, refused = failed
    kind = EnqueueRefusedError if refused else EnqueueUnavailableError
    not_enqueued = _not_enqueued(config, error, unknown)
    if not_enqueued is not None:
        return kind(f"{problem}; {not_enqueued}")
    return kind(problem, unknown=unknown)


def _not_enqueued(config: Config, error: redis.RedisError, jids: Sequence[str]) -> str | None:
    """That `jids` were not enqueued, and what to do, as the end of the error's message,
    when `error` means no Redis ran the command; None when one may have.  A refused
    connection sent nothing (the clients never send again after an error, see
    `adapters.connection`); a server that didn't answer as Redis (another server at the
    port, which the problem names) ran nothing.  On a cluster, another node may have had
    its part."""
    if config.redis_target().cluster:
        return None
    which = f"job {jids[0]} was" if len(jids) == 1 else f"these {len(jids)} jobs were"
    if redis_access.not_redis(error) is not None:
        return f"{which} not enqueued"
    # redis-py 5.0 raises its ConnectionError without `from`: the refusal is the context.
    if not isinstance(error.__cause__ or error.__context__, ConnectionRefusedError):
        return None
    said = f"the connection was refused, nothing reached Redis: {which} not enqueued"
    if config.redis_is_configured():
        return said
    return f"{said} (start Redis, or `cogworker work`: it starts an embedded one when none answers)"


@contextmanager
def enqueue_errors(config: Config, unknown: Sequence[str]) -> Iterator[None]:
    """Around a push: a Redis failure (or too few replicas) raised as `enqueue_failure`'s
    error, naming the `unknown` jids; another error raised as it is."""
    try:
        yield
    except (redis.RedisError, NotReplicatedError) as error:
        failure = enqueue_failure(config, error, unknown)
        if failure is None:
            raise
        raise failure from error


@contextmanager
def read_errors(config: Config, doing: str) -> Iterator[None]:
    """Around a read: a Redis failure raised as the error saying what it stopped (`doing`)."""
    try:
        yield
    except redis.RedisError as error:
        failure = read_failure(config, doing, error)
        if failure is None:
            raise
        raise failure from error


def read_failure(
    config: Config, doing: str, error: redis.RedisError
) -> RedisRefusedError | RedisUnavailableError | None:
    """The error to raise for a read that `error` stopped; None for another error."""
    failed = _failure(config, doing, error)
    if failed is None:
        return None
    problem, refused = failed
    return (RedisRefusedError if refused else RedisUnavailableError)(problem)


def _failure(config: Config, doing: str, error: redis.RedisError) -> tuple[str, bool] | None:
    """What to say of `error` and whether Redis refused (else it went away); None for
    another error."""
    where = config.redis_target().described()
    refused = redis_access.refusal(error)
    if refused is not None:
        return f"{doing}: {where}: {refused}", True
    if isinstance(error, redis.ConnectionError | redis.TimeoutError):
        return f"{doing}: {where}: Redis is unavailable ({error})", False
    if refused_while_moving(error):  # sent again for `PATIENCE` already (scripts)
        moving = "its hash slot is moving to another primary; try again once it has"
        return f"{doing}: {where}: {moving} ({error})", False
    return None
