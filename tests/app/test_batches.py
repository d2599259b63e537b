"""Opening and filling batches from both clients: bad callbacks and closed batches are
clear errors, and only what was pushed is a member."""

from __future__ import annotations

import asyncio

import pytest

import cogworker
from tests.app.jobs import Count, Record
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies


def test_a_callback_a_worker_cant_import_is_refused_naming_it(client: cogworker.Client) -> None:
    """A class defined in a function, a path naming nothing, something not a Job class: each
    an UnknownJobClassError naming the value, before anything is written."""

    class Local(cogworker.Job):
        def perform(self) -> None: ...

    with pytest.raises(cogworker.UnknownJobClassError, match=r"on_success=.*Local.*can't import"):
        client.batch(on_success=Local)
    with pytest.raises(cogworker.UnknownJobClassError, match=r"on_complete='tests.app.jobs.Nope'"):
        client.batch(on_complete="tests.app.jobs.Nope")
    with pytest.raises(cogworker.UnknownJobClassError, match=r"on_success=<class 'int'>"):
        client.batch(on_success=int)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"args\[0\] is set"):
        client.batch(on_success=Count, args=[{1}])  # type: ignore[list-item]
    with cogworker.testing.fake(), pytest.raises(cogworker.ConfigError, match="testing mode"):
        client.batch(on_success=Count)
    assert client.redis.zcard("cogworker:batches") == 0


def test_a_closed_batch_takes_no_more_members(client: cogworker.Client) -> None:
    """After the with block, enqueueing is a BatchClosedError naming the batch and class."""
    with client.batch(on_complete=Count) as batch:
        batch.enqueue(Record, "a")
    with pytest.raises(cogworker.BatchClosedError, match=rf"batch {batch.bid} is closed.*Record"):
        batch.enqueue(Record, "b")
    status = client.batch_status(batch.bid)
    assert status is not None
    assert (status.closed, status.total, status.pending) == (True, 1, 1)
    assert client.batch_status("no-such-batch") is None


def test_an_exception_in_the_block_closes_the_batch_with_what_was_pushed(
    client: cogworker.Client,
) -> None:
    """The members pushed before the error stay members and the batch closes; the error
    propagates."""
    batch = client.batch(on_complete=Count)

    def fill() -> None:
        with batch:
            batch.enqueue_many(Record, [["a"], ["b"]])
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        fill()
    status = client.batch_status(batch.bid)
    assert status is not None
    assert (status.closed, status.total) == (True, 2)


def test_a_member_a_middleware_stopped_is_no_member(redis_url: str) -> None:
    """A push the client middleware stops returns None and isn't counted."""

    def stop_b(job: cogworker.JobRecord, call_next: cogworker.CallNext) -> str | None:
        return None if job.args == ("b",) else call_next(job)

    stopping = cogworker.Client(cogworker.Config(redis_url=redis_url, client_middleware=(stop_b,)))
    try:
        with stopping.batch() as batch:
            assert batch.enqueue(Record, "b") is None
            assert batch.enqueue_many(Record, [["a"], ["b"]])[1] is None
        status = stopping.batch_status(batch.bid)
        assert status is not None
        assert status.total == 1
    finally:
        stopping.close()


def test_the_async_client_fills_a_batch_with_async_with(redis_url: str) -> None:
    """`async with client.batch(...)` opens, `await batch.enqueue` fills, leaving closes."""

    async def main() -> cogworker.BatchStatus | None:
        async with cogworker.AsyncClient(cogworker.Config(redis_url=redis_url)) as client:
            opening = client.batch(on_success=Count, args=[1])
            with pytest.raises(RuntimeError, match="open the batch first"):
                _ = opening.bid
            async with opening as batch:
                await batch.enqueue(Record, "a")
            with pytest.raises(cogworker.BatchClosedError):
                await batch.enqueue(Record, "b")
            return await client.batch_status(batch.bid)

    status = asyncio.run(main())
    assert status is not None
    assert (status.closed, status.total, status.callbacks) == (True, 1, {"success"})
