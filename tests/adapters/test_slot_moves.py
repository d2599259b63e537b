"""`slot_moves`: a command refused while its slot moves is sent again until a deadline;
anything that may have run is never sent again.  (On a real cluster:
tests/cluster/test_cluster_resharding.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import redis
from redis.exceptions import ClusterDownError, ClusterError, TryAgainError

from cogworker.adapters.slot_moves import (
    PATIENCE,
    PAUSE,
    refused_while_moving,
    while_slot_moves,
    while_slot_moves_async,
)


def gave_up() -> ClusterError:
    """What redis-py raises once every attempt at a command was redirected or refused."""
    return ClusterError("TTL exhausted.")


class Clock:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def sender(replies: list[object]) -> tuple[Callable[[], object], list[int]]:
    """A `send` raising or returning each of `replies` in turn, and its count of sends."""
    sent = [0]

    def send() -> object:
        reply = replies[min(sent[0], len(replies) - 1)]
        sent[0] += 1
        if isinstance(reply, Exception):
            raise reply
        return reply

    return send, sent


def test_only_redis_py_giving_up_on_redirects_counts_as_refused_by_a_move() -> None:
    """The "TTL exhausted" ClusterError is; a cluster down, a TRYAGAIN redis-py raised
    itself, a lost connection and other cluster errors are not."""
    assert refused_while_moving(gave_up())
    others = [
        ClusterDownError("CLUSTERDOWN"),
        TryAgainError("TRYAGAIN"),
        redis.ConnectionError("gone"),
        ClusterError("something else"),
        "TTL exhausted.",
    ]
    assert not any(refused_while_moving(reply) for reply in others)


def test_a_refused_command_is_sent_again_until_it_runs() -> None:
    """Refused twice, then answered: three sends, a pause before each again."""
    clock = Clock()
    send, sent = sender([gave_up(), gave_up(), "OK"])
    assert while_slot_moves(send, clock=clock, sleep=clock.sleep) == "OK"
    assert sent == [3]
    assert clock.slept == [PAUSE, PAUSE]


def test_an_async_command_is_sent_again_until_it_runs_and_no_longer_past_the_patience() -> None:
    """The asyncio twin: refused twice, then answered (three sends); refused past the
    deadline `until` (the clock already there), the refusal raised after one send."""
    clock = Clock()
    send, sent = sender([gave_up(), gave_up(), "OK"])

    async def awaited(send: Callable[[], object]) -> object:
        return send()

    reply = asyncio.run(while_slot_moves_async(lambda: awaited(send), clock=clock))
    assert (reply, sent) == ("OK", [3])
    refused, tries = sender([gave_up()])
    with pytest.raises(ClusterError, match="TTL exhausted"):
        asyncio.run(while_slot_moves_async(lambda: awaited(refused), until=clock(), clock=clock))
    assert tries == [1]


def test_a_command_refused_past_the_patience_raises_the_refusal() -> None:
    """Refused again and again: sent until `PATIENCE` has passed, then the error raised."""
    clock = Clock()
    send, sent = sender([gave_up()])
    with pytest.raises(ClusterError, match="TTL exhausted"):
        while_slot_moves(send, clock=clock, sleep=clock.sleep)
    assert clock.now >= 100.0 + PATIENCE
    assert sent[0] == len(clock.slept) + 1 == pytest.approx(PATIENCE / PAUSE + 1, abs=1)


def test_a_deadline_given_is_kept_and_a_command_is_sent_at_least_once() -> None:
    """Past the given deadline already: one send, its refusal raised."""
    clock = Clock()
    send, sent = sender([gave_up()])
    with pytest.raises(ClusterError):
        while_slot_moves(send, until=clock.now - 1.0, clock=clock, sleep=clock.sleep)
    assert sent == [1]


@pytest.mark.parametrize(
    "error",
    [redis.ConnectionError("reset"), redis.TimeoutError("timed out"), ClusterError("other")],
)
def test_an_error_after_which_the_command_may_have_run_is_never_sent_again(
    error: Exception,
) -> None:
    """A lost connection, a timeout, another cluster error: raised at the first send."""
    clock = Clock()
    send, sent = sender([error, "OK"])
    with pytest.raises(type(error)):
        while_slot_moves(send, clock=clock, sleep=clock.sleep)
    assert sent == [1]
