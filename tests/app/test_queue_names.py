"""A queue name the dashboard couldn't reach is refused where a job class, a middleware or a
worker's config names it, before anything is pushed."""

from __future__ import annotations

import attrs
import pytest
import redis

import cogworker
from cogworker import JobRecord
from cogworker.adapters import redis_keys as keys
from cogworker.app.middleware import Push
from cogworker.domain.queues import NAME_RULE
from tests.app.jobs import Record


@pytest.mark.parametrize("queue", ["a\nb", "y" * 501, " default"])
def test_a_job_class_naming_such_a_queue_is_refused(queue: str) -> None:
    """The class statement itself fails, saying which rule its queue breaks."""
    with pytest.raises(TypeError, match="queue") as refused:

        class Misnamed(cogworker.Job, queue=queue):
            def perform(self) -> None:
                """Nothing."""

    assert NAME_RULE in str(refused.value)


def _to_a_bad_queue(job: JobRecord, push: Push) -> str | None:
    return push(attrs.evolve(job, queue="bad\x00queue"))


def test_an_enqueue_a_middleware_sends_to_such_a_queue_pushes_nothing(
    redis_url: str, rc: redis.Redis
) -> None:
    """A client middleware renaming the queue to one with a NUL: the enqueue raises, naming
    the rule, and Redis holds no job and no such queue."""
    config = cogworker.Config(redis_url=redis_url, client_middleware=(_to_a_bad_queue,))
    client = cogworker.Client(config)
    try:
        with pytest.raises(ValueError, match="control character"):
            client.enqueue(Record, "x")
        with pytest.raises(ValueError, match="control character"):
            client.enqueue_many(Record, [["y"], ["z"]])
    finally:
        client.close()
    assert rc.smembers("cogworker:queues") == set()
    assert rc.keys(keys.queue("*")) == []


def test_a_worker_config_naming_such_a_queue_is_refused() -> None:
    """`Config(queues=...)` with a tab in a name fails at construction."""
    with pytest.raises(cogworker.ConfigError, match="control character"):
        cogworker.Config(queues=("default", "low\tpriority"))
