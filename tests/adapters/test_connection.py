"""The per-thread clients (`per_thread.thread_clients`): a kept connection per thread, safe
across threads, forks, restarts."""

from __future__ import annotations

import contextlib
import os
import threading

import redis

from cogworker.adapters import redis_target
from cogworker.adapters.connection import connect
from cogworker.adapters.per_thread import PerThread, thread_clients
from tests.support.redis_server import RedisServerFactory

THREADS = 8
CALLS = 300


def _per_thread(shared: redis.Redis) -> PerThread[redis.Redis]:
    """The calling thread's plain client of `shared`'s server."""
    clients = thread_clients(shared)
    return PerThread(lambda: _plain(clients()))


def _shared(url: str) -> redis.Redis:
    """A pooled client of the server at `url`; closing it closes every thread's."""
    return _plain(connect(redis_target.parse(url, "the test")))


def _plain(client: object) -> redis.Redis:
    assert type(client) is redis.Redis  # redis-py's client as shipped
    return client


def _client_names(rc: redis.Redis) -> list[str]:
    return [entry["name"] for entry in rc.client_list() if entry["name"].startswith("t")]


def test_threads_each_keep_one_connection_and_never_read_each_others_replies(
    rc: redis.Redis, redis_url: str
) -> None:
    """Eight threads, each naming its own connection, always read back their own replies."""
    shared = _shared(redis_url)
    clients = _per_thread(shared)
    wrong: list[str] = []

    def work(name: str) -> None:
        client = clients()
        client.client_setname(name)
        for number in range(CALLS):
            client.rpush(name, number)
            if client.client_getname() != name:
                wrong.append(name)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert wrong == []
    assert sorted(_client_names(rc)) == sorted(f"t{n}" for n in range(THREADS))
    for n in range(THREADS):
        assert rc.lrange(f"t{n}", 0, -1) == [str(i).encode() for i in range(CALLS)]
    shared.close()


def test_a_finished_thread_gives_its_connection_back_to_the_pool(redis_url: str) -> None:
    """Threads that come and go don't leave one open connection each behind."""
    shared = _shared(redis_url)
    clients = _per_thread(shared)
    for _ in range(20):
        thread = threading.Thread(target=lambda: clients().ping())
        thread.start()
        thread.join(10)
    pool = shared.connection_pool
    assert len(pool._in_use_connections) == 0  # the pool's own ledger
    assert len(pool._available_connections) <= 2
    shared.close()


def test_a_forked_child_opens_its_own_connection(rc: redis.Redis, redis_url: str) -> None:
    """A child forked after the parent's first command talks over a socket of its own."""
    shared = _shared(redis_url)
    clients = _per_thread(shared)
    clients().client_setname("parent")
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, reports through its exit code
        ok = clients().client_getname() is None and clients().rpush("from-child", 1) == 1
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert clients().client_getname() == "parent"
    assert rc.lrange("from-child", 0, -1) == [b"1"]
    shared.close()


def test_a_restarted_redis_is_reached_again_after_one_failed_call(
    redis_server_factory: RedisServerFactory,
) -> None:
    """A kept connection broken by a restart fails one call, and the next reconnects."""
    server = redis_server_factory()
    shared = _shared(server.url)
    client = _per_thread(shared)()
    assert client.set("before", 1)
    server.restart()
    # The old socket is gone: this call may fail (it is never re-sent blindly).
    with contextlib.suppress(redis.ConnectionError):
        client.get("before")
    assert client.set("after", 2)
    assert client.get("after") == b"2"
    shared.close()
