"""A cleared queue is unregistered only while it is empty, even with a push racing it."""

from __future__ import annotations

from typing import Any

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.adapters.dashboard_removal import Removal
from cogworker.adapters.jobs.enqueue import EnqueueStore

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
