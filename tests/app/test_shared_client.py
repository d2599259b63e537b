"""One `Client` shared by many threads, as a threaded web server shares it: every job pushed
exactly once, its queue registered and the layout number written, however their first
pushes race."""

from __future__ import annotations

import threading

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import LayoutStore
from cogworker.domain import layout, payload
from tests.app.jobs import Count

THREADS = 50
JOBS = 2_000


def test_fifty_threads_sharing_one_client_push_every_job_once(
    rc: redis.Redis, client: cogworker.Client
) -> None:
    """Released together on a fresh Redis, so their first pushes race for the layout check
    and the queue's registration; each job's number and jid land on the queue once."""
    numbers = iter(range(JOBS))
    jids: list[str | None] = []
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def produce() -> None:
        start.wait()
        try:
            for number in numbers:
                jids.append(client.enqueue(Count, number))
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=produce) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    queued = [payload.decode(raw).unwrap() for raw in rc.lrange(keys.queue("default"), 0, -1)]
    assert sorted(job.args[0] for job in queued) == list(range(JOBS))
    assert sorted(job.jid for job in queued) == sorted(jids)
    assert len(set(jids)) == JOBS
    assert rc.smembers(keys.QUEUES) == {b"default"}
    assert LayoutStore(rc).stored() == layout.current()
