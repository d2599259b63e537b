"""A configured Redis that can't be reached: a clear, retried error, never a silent switch."""

from __future__ import annotations

import signal

import pytest

import cogworker
from tests.app.jobs import Record
from tests.support.processes import CogworkerFactory, wait_until
from tests.support.redis_server import RedisServerFactory


def test_a_worker_waits_for_its_configured_redis_and_then_works(
    cogworker_factory: CogworkerFactory, redis_server_factory: RedisServerFactory
) -> None:
    """Down at start: the worker logs its back-off, keeps trying, and works once Redis is up."""
    server = redis_server_factory()
    url = server.url
    server.stop()
    worker = cogworker_factory(
        "tests.app.jobs:fast_config", redis_url=url, env={"COGWORKER_TEST_REDIS_URL": url}
    )
    wait_until(lambda: worker.log_text().count("registering with Redis failed") >= 1, 20)
    assert worker.is_running
    assert "embedded" not in worker.log_text()
    server.start()
    wait_until(lambda: "worker started" in worker.log_text(), 30, message=worker.log_tail)
    client = cogworker.Client(cogworker.Config(redis_url=url))
    jid = client.enqueue(Record, "after-outage")
    wait_until(lambda: server.client().sismember("done", jid), 20, message=worker.log_tail)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait_for_exit(20) == 0


def test_enqueue_while_redis_is_down_raises_a_clear_error() -> None:
    """Enqueueing with Redis away raises RedisUnavailableError naming the (password-free) URL."""
    client = cogworker.Client(cogworker.Config(redis_url="redis://user:secret@127.0.0.1:1/0"))
    with pytest.raises(
        cogworker.RedisUnavailableError, match=r"user:\*\*\*@127\.0\.0\.1:1"
    ) as info:
        client.enqueue(Record, "x")
    assert "secret" not in str(info.value)
