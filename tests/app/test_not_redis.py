"""Another server at the Redis URL's port (an HTTP server here): the client raises the
enqueue error and the worker stops at start-up, each saying this is not a Redis server."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import redis
from click.testing import CliRunner

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.cli import main
from cogworker.app.worker.backoff import Backoff
from tests.app.helpers import FAST_APP
from tests.app.jobs import Record
from tests.support.clients import EitherClient
from tests.support.processes import CogworkerFactory

NOT_REDIS = "this is not a Redis server: it did not answer as Redis"


@pytest.fixture
def http_url() -> Iterator[str]:
    """A redis:// URL whose port is a real HTTP server's (it answers 400 to what Redis is
    sent), served from a thread while the test runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    yield f"redis://127.0.0.1:{server.server_address[1]}/0"
    server.shutdown()
    serving.join(10.0)
    server.server_close()


@pytest.fixture
def client_config(http_url: str) -> cogworker.Config:
    """`either_client` on the HTTP server."""
    return cogworker.Config(redis_url=http_url)


def test_an_enqueue_to_an_http_server_is_an_enqueue_error_saying_so(
    either_client: EitherClient, http_url: str
) -> None:
    """The documented EnqueueError (a refusal: no retry makes it a Redis), naming the URL
    and asking whether its port is a Redis server's; not redis-py's protocol error.  No
    Redis ran it, so the job was not enqueued: no jid is unknown."""
    with pytest.raises(cogworker.EnqueueRefusedError) as refused:
        either_client.enqueue(Record, "x", jid="http-1")

    message = str(refused.value)
    assert NOT_REDIS in message
    assert http_url.removeprefix("redis://") in message
    assert "is the URL's port a Redis server's?" in message
    assert (refused.value.pushed, refused.value.unknown) == ((), ())
    assert message.endswith("; job http-1 was not enqueued")
    assert "may or may not" not in message


def test_a_worker_on_an_http_server_exits_at_start_saying_so(
    cogworker_factory: CogworkerFactory, http_url: str
) -> None:
    """It stops with the setting's exit status (2) and one plain line, no traceback, instead
    of retrying forever."""
    worker = cogworker_factory(FAST_APP, redis_url=http_url)

    status = worker.wait_for_exit(30.0)

    assert status == 2, worker.log_text()
    assert NOT_REDIS in worker.log_text()
    assert "Traceback" not in worker.log_text()


def test_an_inspecting_command_on_an_http_server_says_so(http_url: str) -> None:
    """`cogworker stats` checks the server as `work` and `serve` do: exit status 2, one line."""
    result = CliRunner().invoke(main, ["stats", "--redis-url", http_url])

    assert result.exit_code == 2, result.output
    assert NOT_REDIS in result.output


def test_the_runtimes_back_off_says_this_is_not_a_redis_server(
    http_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A loop whose Redis turned into another server (after start-up) logs it plainly."""
    with pytest.raises(redis.RedisError) as failed:
        redis.Redis.from_url(http_url, socket_timeout=10).llen(keys.queue("default"))
    logger = logging.getLogger("tests.not_redis")

    with caplog.at_level(logging.WARNING, logger.name):
        Backoff("fetch", logger).failed(failed.value)

    [record] = caplog.records
    assert f"fetch failed ({NOT_REDIS}" in record.getMessage()
