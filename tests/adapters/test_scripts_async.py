"""Scripts on redis.asyncio: the same shape check, the same reload after NOSCRIPT, the same
pipeline replies as on the sync client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import redis_target, scripts
from cogworker.adapters.connection import connect, connect_async
from cogworker.adapters.scripts import TAKE_LOCK

#: One pipeline, as each client sends it: two locks taken, then LPUSH on a string (WRONGTYPE).
Send = Callable[[str, bool], list[Any]]
#: Two locks in two queues' slots (take_lock.lua sets one to a holder, with a TTL).
LOCK_A, LOCK_B = keys.unique_lock("a", "l"), keys.unique_lock("b", "l")


def _sync_pipeline(url: str, with_error: bool) -> list[Any]:
    with connect(redis_target.parse(url, "the test")) as client:
        pipe = client.pipeline(transaction=False)
        TAKE_LOCK.queue(pipe, (LOCK_A,), ("one", 60_000))
        TAKE_LOCK.queue(pipe, (LOCK_B,), ("two", 60_000))
        if with_error:
            pipe.lpush("a-string", "x")
        return scripts.run_pipeline(client, pipe)


def _async_pipeline(url: str, with_error: bool) -> list[Any]:
    async def main() -> list[Any]:
        client = connect_async(redis_target.parse(url, "the test"))
        try:
            pipe = client.pipeline(transaction=False)
            TAKE_LOCK.queue(pipe, (LOCK_A,), ("one", 60_000))
            TAKE_LOCK.queue(pipe, (LOCK_B,), ("two", 60_000))
            if with_error:
                pipe.lpush("a-string", "x")
            return await scripts.run_pipeline_async(client, pipe)
        finally:
            await client.aclose()

    return asyncio.run(main())


SENDS = [pytest.param(_sync_pipeline, id="sync"), pytest.param(_async_pipeline, id="async")]


def test_run_async_reloads_a_forgotten_script_and_runs_it_once(
    rc: redis.Redis, redis_url: str
) -> None:
    """After SCRIPT FLUSH, run_async loads the script and its one run takes the lock."""
    rc.script_flush()

    async def main() -> Any:
        client = connect_async(redis_target.parse(redis_url, "the test"))
        try:
            return await TAKE_LOCK.run_async(client, (LOCK_A,), ("p1", 60_000))
        finally:
            await client.aclose()

    assert asyncio.run(main()) == 1
    assert rc.get(LOCK_A) == b"p1"
    assert rc.script_exists(TAKE_LOCK.sha) == [True]


def test_run_async_refuses_a_call_that_does_not_fit_before_redis(
    rc: redis.Redis, redis_url: str
) -> None:
    """A lock taken without its TTL is a TypeError naming the shape; nothing reaches Redis."""

    async def main() -> None:
        client = connect_async(redis_target.parse(redis_url, "the test"))
        try:
            await TAKE_LOCK.run_async(client, (LOCK_A,), ("p1",))
        finally:
            await client.aclose()

    with pytest.raises(TypeError, match=r"lua/take_lock.lua takes KEYS 1, ARGV 2"):
        asyncio.run(main())
    assert rc.keys("*") == []


@pytest.mark.parametrize("send", SENDS)
def test_a_pipeline_of_forgotten_scripts_runs_each_once(
    rc: redis.Redis, redis_url: str, send: Send
) -> None:
    """Both scripts of a pipeline Redis answered NOSCRIPT to are loaded and run once each."""
    rc.script_flush()

    assert send(redis_url, False) == [1, 1]
    assert rc.get(LOCK_A) == b"one"
    assert rc.get(LOCK_B) == b"two"


@pytest.mark.parametrize("send", SENDS)
def test_an_error_in_a_pipeline_is_raised_after_the_scripts_before_it_ran(
    rc: redis.Redis, redis_url: str, send: Send
) -> None:
    """NOSCRIPT, NOSCRIPT, WRONGTYPE: the two scripts are re-run, then the error raised."""
    rc.script_flush()
    rc.set("a-string", "x")

    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        send(redis_url, True)
    assert rc.get(LOCK_A) == b"one"
    assert rc.get(LOCK_B) == b"two"
