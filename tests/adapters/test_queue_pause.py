"""A queue's pause: a flag in its slot that the fetch scripts read next to the queue, and an
index of names to list them, which readers trust only where the flag says so."""

from __future__ import annotations

from typing import Any

import redis

from cogworker.adapters import queue_pause, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import FetchStore
from tests.support.topology_marks import on_both_topologies, single_node_only

pytestmark = on_both_topologies

IDENTITY = "host:1:pause"


def _push(rc: redis.Redis, queue: str, *names: str) -> None:
    for name in names:
        rc.lpush(keys.queue(queue), f'{{"jid":"{name}","queue":"{queue}"}}')


def test_a_pause_is_a_flag_in_the_queues_slot_and_a_name_in_the_index(rc: redis.Redis) -> None:
    """Pause sets both, resume clears both; each says whether it changed anything."""
    assert queue_pause.pause(rc, ["a", "b"]) == [True, True]
    assert queue_pause.pause(rc, ["a"]) == [False]
    assert rc.exists("cogworker:{q:a}:paused") == 1
    assert rc.smembers(keys.PAUSED) == {b"a", b"b"}
    assert queue_pause.paused(rc) == {"a", "b"}
    assert queue_pause.resume(rc, ["a", "c"]) == [True, False]
    assert rc.exists(keys.queue_paused("a")) == 0
    assert rc.smembers(keys.PAUSED) == {b"b"}
    assert queue_pause.paused(rc) == {"b"}


def test_a_name_left_in_the_index_without_its_flag_is_not_paused(rc: redis.Redis) -> None:
    """What a crash after a pause's first SADD leaves: listed nowhere as paused, not shown as
    a queue unless registered; pausing it again says it was running."""
    rc.sadd(keys.PAUSED, "ghost")
    assert queue_pause.paused(rc) == frozenset()
    assert tracking.queues(rc, 0.0) == []
    assert queue_pause.pause(rc, ["ghost"]) == [True]
    [load] = tracking.queues(rc, 0.0)
    assert (load.name, load.paused) == ("ghost", True)


class PauseAfterFirstCommand(redis.Redis):
    """A client whose pipelines send their first command, then let another client pause
    `queue` whole, then send the rest: a pause racing between a resume's DEL and SREM."""

    def __init__(self, pauser: redis.Redis, queue: str, **options: Any) -> None:
        super().__init__(**options)
        self.pauser, self.queue = pauser, queue

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        client = self

        class Raced(redis.client.Pipeline):
            def execute(self, raise_on_error: bool = True) -> list[Any]:
                first, rest = self.command_stack[:1], self.command_stack[1:]
                self.command_stack = first
                head = super().execute(raise_on_error)
                queue_pause.pause(client.pauser, [client.queue])
                self.command_stack = rest
                return head + super().execute(raise_on_error)

        return Raced(self.connection_pool, self.response_callbacks, transaction, shard_hint)


@single_node_only  # races on a connection of its own to one server
def test_a_resume_raced_by_a_pause_leaves_the_queue_paused_and_listed(
    rc: redis.Redis, redis_url: str
) -> None:
    """The pause's flag lands after the resume's DEL and its name before the resume's SREM:
    the resume finds the flag again and puts the name back, so the index still lists every
    flagged queue."""
    queue_pause.pause(rc, ["a"])
    options = rc.connection_pool.connection_kwargs
    racing = PauseAfterFirstCommand(rc, "a", host=options["host"], port=options["port"])
    assert queue_pause.resume(racing, ["a"]) == [True]
    racing.close()
    assert rc.exists(keys.queue_paused("a")) == 1
    assert queue_pause.paused(rc) == {"a"}


def test_fetch_skips_a_paused_queue_and_says_so(rc: redis.Redis) -> None:
    """Two queues, the first paused: the fetch plan takes from the second only, and its
    turn names the paused one, whose jobs stay (reliable and basic fetch)."""
    _push(rc, "high", "h1", "h2")
    _push(rc, "low", "l1", "l2", "l3")
    queue_pause.pause(rc, ["high"])
    store = FetchStore(rc)

    turn = store.fetch(IDENTITY, ["high", "low"], 2)
    assert [job.queue for job in turn.jobs] == ["low", "low"]
    assert turn.paused == {"high"}
    popped = store.pop(["high", "low"], 5)
    assert [job.queue for job in popped.jobs] == ["low"]
    assert popped.paused == {"high"}
    assert rc.llen(keys.queue("high")) == 2

    queue_pause.resume(rc, ["high"])
    turn = store.fetch(IDENTITY, ["high", "low"], 5)
    assert ([job.queue for job in turn.jobs], turn.paused) == (["high", "high"], frozenset())


def test_a_blocking_wait_says_whether_its_queue_was_paused_after_it(rc: redis.Redis) -> None:
    """The blocking paths can't skip: they take the job and say the queue is paused, for the
    fetcher to put it back."""
    _push(rc, "default", "j1")
    queue_pause.pause(rc, ["default"])
    store = FetchStore(rc)
    turn = store.fetch_blocking(IDENTITY, "default", 1)
    assert (len(turn.jobs), turn.paused) == (1, {"default"})
    _push(rc, "default", "j2")
    turn = store.pop_blocking("default", 1)
    assert ([job.queue for job in turn.jobs], turn.paused) == (["default"], {"default"})
