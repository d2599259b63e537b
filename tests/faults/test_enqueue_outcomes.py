"""Enqueues that Redis fails part-way say what was pushed; a caller's jid is pushed once."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.middleware import Push
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from tests.app import jobs as app_jobs
from tests.faults import jobs
from tests.faults.conftest import StartWorker, registered, stop_all
from tests.support.processes import wait_until
from tests.support.redis_server import RedisServer
from tests.unique import jobs as unique_jobs

RETRYABLE = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)
COUNT = 3_000
#: The first job of the second round trip (enqueue_many pushes 1,000 per round trip).
FAULT_AT = 1_000


def fault_at(index: int, fault: Callable[[], None]) -> Callable[[JobRecord, Push], str | None]:
    """A client middleware that applies `fault` to Redis just before the `index`th push."""
    seen = [0]

    def middleware(job: JobRecord, push: Push) -> str | None:
        if seen[0] == index:
            fault()
        seen[0] += 1
        return push(job)

    return middleware


def queued_jids(inspect: redis.Redis, queue: str = "default") -> list[str]:
    """The jids of the jobs waiting in `queue`, once Redis answers again."""
    entries = wait_until(lambda: [inspect.lrange(keys.queue(queue), 0, -1)], 30, ignore=RETRYABLE)[
        0
    ]
    return [payload.decode(entry).unwrap().jid for entry in entries]


@pytest.fixture
def faulty_client(
    server: RedisServer,
) -> Iterator[Callable[[Callable[[], None]], cogworker.Client]]:
    """A client whose middleware applies a fault to the test's Redis at the 1,000th push."""
    made: list[cogworker.Client] = []

    def make(fault: Callable[[], None]) -> cogworker.Client:
        config = cogworker.Config(
            redis_url=server.url, client_middleware=(fault_at(FAULT_AT, fault),)
        )
        made.append(cogworker.Client(config))
        return made[-1]

    yield make
    for client in made:
        client.close()


@pytest.mark.parametrize("fault", ["kill", "freeze"])
def test_enqueue_many_names_the_jids_pushed_and_those_unknown(
    faulty_client: Callable[[Callable[[], None]], cogworker.Client],
    server: RedisServer,
    inspect: redis.Redis,
    fault: str,
) -> None:
    """Redis killed (AOF) or frozen past the socket timeout mid-enqueue_many of 3,000:
    every jid in `pushed` is queued, every queued jid is in `pushed` or `unknown`.  A kill
    refuses the reconnect (the pooled connection is closed): that round trip sent nothing,
    and the error says its jobs were not enqueued, none unknown."""
    client = faulty_client(server.kill if fault == "kill" else server.pause)
    jids = [f"bulk-{n}" for n in range(COUNT)]

    with pytest.raises(cogworker.EnqueueUnavailableError) as info:
        client.enqueue_many(jobs.Count, [[n] for n in range(COUNT)], jids=jids)

    error = info.value
    assert isinstance(error, cogworker.RedisUnavailableError)
    assert list(error.pushed) == jids[:FAULT_AT]
    if error.unknown:
        assert "may or may not have been enqueued" in str(error)
        assert list(error.unknown) == jids[FAULT_AT : 2 * FAULT_AT]
    else:
        assert fault == "kill"
        assert f"these {FAULT_AT} jobs were not enqueued" in str(error)
    if fault == "kill":
        server.start()
    else:
        server.resume()
    in_redis = set(queued_jids(inspect))
    assert set(error.pushed) <= in_redis
    assert in_redis <= set(error.pushed) | set(error.unknown)

    # Pushing them all again with the same jids (until Redis takes it: a pooled
    # connection from before the fault fails once) completes the set, each once.
    again = wait_until(
        lambda: client.enqueue_many(jobs.Count, [[n] for n in range(COUNT)], jids=jids),
        30,
        ignore=(cogworker.EnqueueUnavailableError,),
    )
    assert again == jids
    assert sorted(queued_jids(inspect)) == sorted(jids)


def test_a_single_enqueue_lost_in_a_freeze_is_pushed_once_when_repeated(
    faulty_client: Callable[[Callable[[], None]], cogworker.Client],
    server: RedisServer,
    inspect: redis.Redis,
) -> None:
    """An enqueue whose reply a frozen Redis never sent names its jid as unknown; the
    same enqueue repeated after the thaw leaves exactly one job with that jid."""
    client = faulty_client(server.pause)
    client.enqueue_many(jobs.Count, [[n] for n in range(FAULT_AT)])  # the fault comes next

    with pytest.raises(cogworker.EnqueueUnavailableError) as info:
        client.enqueue(jobs.Count, 1, jid="order-42")

    assert info.value.unknown == ("order-42",)
    assert info.value.pushed == ()
    assert "job order-42 may or may not have been enqueued" in str(info.value)
    server.resume()
    again = wait_until(
        lambda: client.enqueue(jobs.Count, 1, jid="order-42"),
        30,
        ignore=(cogworker.EnqueueUnavailableError,),
    )
    assert again == "order-42"
    assert queued_jids(inspect).count("order-42") == 1


def test_a_jid_waiting_to_retry_is_not_pushed_again_and_is_once_it_ended(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis
) -> None:
    """A caller's jid in the retry set (after a real failed run) isn't pushed twice; once
    the job is gone for good (deleted by hand, lock released) the jid is new again."""
    worker = start_worker(app="tests.app.jobs:fast_config")
    registered(inspect, 1)
    assert client.enqueue(app_jobs.AlwaysFails, "x", jid="retry-me") == "retry-me"
    wait_until(lambda: inspect.zcard(keys.retry("default")) == 1, 30, message=worker.log_tail)
    stop_all(worker)

    assert client.enqueue(app_jobs.AlwaysFails, "x", jid="retry-me") == "retry-me"
    assert inspect.zcard(keys.retry("default")) == 1
    assert inspect.llen(keys.queue("default")) == 0

    inspect.delete(keys.retry("default"), keys.unique_lock("default", "jid:retry-me"))
    assert client.enqueue(app_jobs.AlwaysFails, "x", jid="retry-me") == "retry-me"
    assert queued_jids(inspect) == ["retry-me"]


def test_a_class_unique_until_executed_keeps_its_own_lock_with_a_jid(
    client: cogworker.Client, inspect: redis.Redis
) -> None:
    """With unique='until_executed' the class's lock is the marker: the same jid again
    returns it, another jid with the same arguments is a duplicate (None)."""
    assert client.enqueue(unique_jobs.Report, 7, jid="report-7") == "report-7"
    assert client.enqueue(unique_jobs.Report, 7, jid="report-7") == "report-7"
    assert client.enqueue(unique_jobs.Report, 7, jid="report-7b") is None
    assert inspect.llen(keys.queue(unique_jobs.Report.cogworker_options.queue)) == 1


@pytest.mark.parametrize("job_class", [unique_jobs.Starting, unique_jobs.Exclusive])
def test_a_jid_with_a_lock_that_ends_before_the_job_is_refused(
    client: cogworker.Client, job_class: type[cogworker.Job]
) -> None:
    """until_executing and while_executing locks don't last the job's life: a jid is refused."""
    with pytest.raises(ValueError, match="use unique='until_executed'"):
        client.enqueue(job_class, 1, jid="job-1")


@pytest.mark.parametrize("jid", ["", "has space", "x" * 129, "slash/y"])
def test_a_malformed_jid_is_refused_before_anything_is_pushed(
    client: cogworker.Client, inspect: redis.Redis, jid: str
) -> None:
    """A jid that can't be part of a key or a URL is a ValueError naming it."""
    with pytest.raises(ValueError, match="a jid is 1 to 128"):
        client.enqueue_many(jobs.Count, [[1], [2]], jids=["fine", jid])
    assert inspect.keys("cogworker:*") == []
