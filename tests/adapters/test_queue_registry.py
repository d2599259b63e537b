"""The queue registry: a store registers a queue at its first push and then once a minute;
a cleared queue is unregistered only while it is empty, even with a push racing it."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.adapters.dashboard_removal import Removal
from cogworker.adapters.jobs.enqueue import EnqueueStore, UniquePush
from cogworker.adapters.registrations import Registrations

ENTRY = '{"class":"a.B","args":[],"jid":"j1","queue":"default"}'


class PushAfterFirstLook(redis.Redis):
    """A client whose first LLEN is followed, before anything else it sends, by another
    client's push: the interleaving a clear can meet."""

    def __init__(self, pusher: redis.Redis, **options: Any) -> None:
        super().__init__(**options)
        self.pusher = pusher
        self.pushed = False

    def llen(self, name: str) -> Any:
        """The length, then (once) the other client's push onto the queue."""
        size = super().llen(name)
        if not self.pushed:
            EnqueueStore(self.pusher).push("default", [ENTRY])
            self.pushed = True
        return size


def test_clearing_unregisters_an_empty_queue(rc: redis.Redis) -> None:
    """The last job removed by a clear: the queue leaves the registry."""
    EnqueueStore(rc).push("default", [ENTRY])

    assert QueueStore(rc).delete("default", [Removal(entry=ENTRY.encode())], clearing=True) == [
        True
    ]
    assert not rc.sismember(keys.QUEUES, "default")


def test_a_push_between_the_look_and_the_unregistering_keeps_the_queue_registered(
    rc: redis.Redis,
) -> None:
    """A job pushed after the clear saw the queue empty: the queue is registered back."""
    options = rc.connection_pool.connection_kwargs
    racing = PushAfterFirstLook(rc, host=options["host"], port=options["port"])
    EnqueueStore(rc).push("default", [ENTRY])

    QueueStore(racing).delete("default", [Removal(entry=ENTRY.encode())], clearing=True)

    assert racing.pushed
    assert rc.llen(keys.queue("default")) == 1
    assert rc.sismember(keys.QUEUES, "default")
    racing.close()


def test_a_store_registers_a_queue_at_its_first_push_then_once_a_minute(rc: redis.Redis) -> None:
    """The first push registers; pushes within `every` seconds send no SADD (an unregistered
    queue stays so); the first push after it registers again."""
    now = [100.0]
    store = EnqueueStore(rc, registrations=Registrations(every=60.0, clock=lambda: now[0]))
    store.push("default", [ENTRY])
    assert rc.sismember(keys.QUEUES, "default")

    rc.srem(keys.QUEUES, "default")
    now[0] += 59.0
    store.push_all({"default": [ENTRY]}, {})
    assert not rc.sismember(keys.QUEUES, "default")

    now[0] += 1.0
    store.push("default", [ENTRY])
    assert rc.sismember(keys.QUEUES, "default")
    assert rc.llen(keys.queue("default")) == 3


def test_a_push_that_failed_registers_at_the_next(rc: redis.Redis) -> None:
    """A push Redis refused (WRONGTYPE) notes nothing: the next push registers the queue."""
    store = EnqueueStore(rc)
    rc.set(keys.queue("default"), "not a list")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        store.push("default", [ENTRY])
    rc.delete(keys.queue("default"))
    rc.srem(keys.QUEUES, "default")

    store.push("default", [ENTRY])
    assert rc.sismember(keys.QUEUES, "default")


def test_unique_pushes_register_their_queue_and_reply_per_push(rc: redis.Redis) -> None:
    """Unique pushes: one reply each (the registration's left out), the queue registered."""
    store = EnqueueStore(rc)
    push = UniquePush(queue="default", payload=ENTRY, jid="j1", lock="cogworker:unique:x", ttl=60)
    duplicate = UniquePush(
        queue="default", payload=ENTRY, jid="j2", lock="cogworker:unique:x", ttl=60
    )

    assert store.push_unique([push, duplicate], 0.0) == [1, 0]
    assert rc.sismember(keys.QUEUES, "default")
