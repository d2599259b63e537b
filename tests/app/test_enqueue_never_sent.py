"""What an enqueue that Redis never answered says of its jobs, with real sockets: a refused
connection sent nothing (not enqueued); a connection lost after the send may have pushed."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
import redis

import cogworker
from cogworker.app.enqueue_call import enqueue_failure
from tests.app.jobs import Record
from tests.support.clients import ClientKind, client_of
from tests.support.redis_server import HOST, free_port


@pytest.fixture
def dropping_server() -> Iterator[str]:
    """A TCP server at a URL that reads what a client sends, then closes the connection
    without a reply: a Redis lost after the send."""
    listener = socket.create_server((HOST, 0))
    listener.settimeout(60)
    stopping = threading.Event()

    def serve() -> None:
        while not stopping.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:  # no client within the timeout
                return
            with connection:
                connection.recv(65536)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    address = listener.getsockname()
    yield f"redis://{HOST}:{address[1]}/0"
    stopping.set()
    socket.create_connection(address, timeout=10).close()  # wakes the accept up to stop
    thread.join(10)
    listener.close()


def test_a_refused_connection_says_the_job_was_not_enqueued(client_kind: ClientKind) -> None:
    """Nothing listens on the port: the error says the job was NOT enqueued, and names no
    jid as unknown; a Redis named in the config gets no hint to start one."""
    client = client_of(client_kind, cogworker.Config(redis_url=f"redis://{HOST}:{free_port()}/0"))
    try:
        with pytest.raises(cogworker.EnqueueUnavailableError) as info:
            client.enqueue(Record, "x", jid="refused-1")
        with pytest.raises(cogworker.EnqueueUnavailableError) as many:
            client.enqueue_many(Record, [["a"], ["b"]])
    finally:
        client.close()
    assert (info.value.pushed, info.value.unknown) == ((), ())
    assert "connection was refused" in str(info.value)
    assert "job refused-1 was not enqueued" in str(info.value)
    assert "may or may not" not in str(info.value)
    assert "start Redis" not in str(info.value)
    assert many.value.unknown == ()
    assert "these 2 jobs were not enqueued" in str(many.value)


def test_a_connection_lost_after_the_send_may_have_enqueued(
    client_kind: ClientKind, dropping_server: str
) -> None:
    """The server took the bytes and hung up: the jid is unknown, "may or may not"."""
    client = client_of(client_kind, cogworker.Config(redis_url=dropping_server))
    try:
        with pytest.raises(cogworker.EnqueueUnavailableError) as info:
            client.enqueue(Record, "x", jid="lost-1")
    finally:
        client.close()
    assert info.value.unknown == ("lost-1",)
    assert "job lost-1 may or may not have been enqueued" in str(info.value)


def test_with_no_redis_configured_the_error_says_what_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A refused connection with no Redis named: the error points at Redis or `cogworker
    work` (its embedded Redis), the README's first steps."""
    with redis.Redis(port=free_port()) as nowhere, pytest.raises(redis.ConnectionError) as info:
        nowhere.ping()
    monkeypatch.delenv("COGWORKER_REDIS_URL")
    failure = enqueue_failure(cogworker.Config(), info.value, ["first-1"])
    assert isinstance(failure, cogworker.EnqueueUnavailableError)
    assert "job first-1 was not enqueued" in str(failure)
    assert "start Redis, or `cogworker work`" in str(failure)
