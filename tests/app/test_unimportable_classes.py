"""Job classes a worker can't import: refused at enqueue saying why, or failed naming the
real ImportError."""

from __future__ import annotations

import json
import time

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, zset_entries
from tests.support.clients import EitherClient
from tests.support.processes import wait_until

#: A class in a module this worker (and this checkout) doesn't have.
ON_ANOTHER_MACHINE = "tests.app.not_on_this_worker.SendEvent"


def test_a_class_defined_in_a_function_is_refused_at_enqueue(
    rc: redis.Redis, either_client: EitherClient
) -> None:
    """Its dotted path holds `<locals>`, which no worker can import: a ConfigError naming
    it and saying to define it at module level, and nothing pushed (either client)."""

    class Local(cogworker.Job):
        def perform(self) -> None: ...

    says = r"Local is defined inside a function.*define Local at module level"
    with pytest.raises(cogworker.ConfigError, match=says):
        either_client.enqueue(Local)
    with pytest.raises(cogworker.ConfigError, match=says):
        either_client.enqueue_many(Local, [[], []])
    assert rc.llen(keys.queue("default")) == 0


def test_a_class_defined_in_main_is_refused_saying_why(
    rc: redis.Redis, either_client: EitherClient
) -> None:
    """The message says a worker imports by dotted path and to move the class into a module."""
    in_main = type("Script", (cogworker.Job,), {"__module__": "__main__"})

    with pytest.raises(cogworker.ConfigError) as refused:
        either_client.enqueue(in_main)

    message = str(refused.value)
    assert "Script is defined in __main__" in message
    assert "by its dotted path" in message
    assert "move the class into a module" in message
    assert rc.llen(keys.queue("default")) == 0


def test_a_module_missing_on_the_worker_is_named_in_the_failure(
    rc: redis.Redis, workers: Workers
) -> None:
    """The dead entry's error says the module isn't there (the ImportError's own text), not
    only that an attribute of its package wasn't found."""
    now = time.time()
    job = {
        "class": ON_ANOTHER_MACHINE,
        "args": [],
        "jid": "0123456789abcdef01234567",
        "queue": "default",
        "retry": False,
        "created_at": now,
        "enqueued_at": now,
    }
    rc.sadd("cogworker:queues", "default")
    rc.lpush(keys.queue("default"), json.dumps(job))
    worker = workers.start()

    [(entry, _)] = wait_until(
        lambda: zset_entries(rc, "cogworker:{q:default}:dead"),
        20.0,
        message=lambda: f"never dead; log:\n{worker.log_tail()}",
    )

    assert entry["error_class"].endswith("UnknownJobClassError")
    assert "No module named 'tests.app.not_on_this_worker'" in entry["error_message"]
