"""A drain of every kind of job (plain, retried, scheduled, dead, unique), and its check."""

from __future__ import annotations

import attrs
import redis

from tests.production_redis.jobs import Dies, Drain, FailsOnce, Unique
from tests.support.clients import EitherClient
from tests.support.processes import CogworkerProcess, wait_until


@attrs.frozen
class Mix:
    """How many jobs of each kind a drain enqueues."""

    plain: int = 200
    retried: int = 20
    scheduled: int = 20
    dead: int = 5
    unique: int = 3


def enqueue(client: EitherClient, mix: Mix, *, schedule_in: float = 1.0) -> None:
    """Enqueue `mix`; each unique job twice (the second is refused while the first waits)."""
    client.enqueue_many(Drain, [[n] for n in range(mix.plain)])
    client.enqueue_many(FailsOnce, [[n] for n in range(mix.retried)])
    for n in range(mix.scheduled):
        client.enqueue_in(schedule_in, Drain, mix.plain + n)
    client.enqueue_many(Dies, [[n] for n in range(mix.dead)])
    for n in range(mix.unique):
        assert client.enqueue(Unique, f"key-{n}") is not None
        assert client.enqueue(Unique, f"key-{n}") is None


def runs(side_effects: redis.Redis, kind: str) -> dict[str, int]:
    """jid -> how many times it ran, for jobs of `kind`."""
    return {jid.decode(): int(count) for jid, count in side_effects.hgetall(f"runs:{kind}").items()}


def finished(side_effects: redis.Redis, mix: Mix) -> bool:
    """Whether every job of `mix` has run to its end (the dead ones once)."""
    return (
        len(runs(side_effects, "drain")) >= mix.plain + mix.scheduled
        and len(runs(side_effects, "fails_once:done")) >= mix.retried
        and len(runs(side_effects, "dies")) >= mix.dead
        and len(runs(side_effects, "unique")) >= mix.unique
    )


def wait_drained(
    side_effects: redis.Redis, mix: Mix, *workers: CogworkerProcess, timeout: float = 60.0
) -> None:
    """Wait until `mix` has run, saying what the workers logged if it doesn't."""
    wait_until(
        lambda: finished(side_effects, mix),
        timeout,
        message=lambda: (
            "the drain didn't finish; logs:\n"
            + "\n---\n".join(worker.log_tail() for worker in workers)
        ),
    )
