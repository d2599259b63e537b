"""AsyncClient against a real Redis: every enqueue form, unique locks, jids, statuses,
errors, the same payloads as the sync client's, and a real worker running its jobs (its
middleware: test_async_client_middleware.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
import redis

import cogworker
from cogworker import AsyncClient
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, queue_payloads, with_async_client, zset_entries
from tests.app.jobs import Record, RecordAsync
from tests.support.processes import wait_until
from tests.unique import jobs as unique_jobs

#: What differs between two pushes of the same job: its id and when it was made.
PER_PUSH = ("jid", "created_at", "enqueued_at")


def redis_now(rc: redis.Redis) -> float:
    """Redis's clock now."""
    seconds, microseconds = rc.time()
    return seconds + microseconds / 1e6


def shape(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload without what differs between two pushes of the same job."""
    return {key: value for key, value in payload.items() if key not in PER_PUSH}


def test_every_enqueue_form_lands_where_it_should(rc: redis.Redis, redis_url: str) -> None:
    """enqueue, enqueue_in, enqueue_at (a timestamp, an aware datetime, a past time) and
    enqueue_many: on the queue or in the schedule, due by Redis's clock."""
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)

    async def work(client: AsyncClient) -> dict[str, Any]:
        return {
            "now": await client.enqueue(Record, "a", {"k": [1, None]}),
            "in": await client.enqueue_in(60, Record, "b"),
            "at": await client.enqueue_at(later, Record, "c"),
            "past": await client.enqueue_at(1_000.0, Record, "d"),
            "many": await client.enqueue_many(Record, [[1], [2], [3]]),
        }

    before = redis_now(rc)
    jids = with_async_client(cogworker.Config(redis_url=redis_url), work)
    after = redis_now(rc)

    queued = list(reversed(queue_payloads(rc, "default")))  # LPUSH: the newest first
    assert [job["jid"] for job in queued] == [jids["now"], jids["past"], *jids["many"]]
    assert [job["args"] for job in queued] == [["a", {"k": [1, None]}], ["d"], [1], [2], [3]]
    scheduled = {job["jid"]: score for job, score in zset_entries(rc, keys.schedule("default"))}
    assert set(scheduled) == {jids["in"], jids["at"]}
    assert before + 60 - 0.5 <= scheduled[jids["in"]] <= after + 60 + 0.5
    assert scheduled[jids["at"]] == pytest.approx(later.timestamp())


def test_arguments_and_calls_are_checked_before_anything_is_pushed(
    rc: redis.Redis, redis_url: str
) -> None:
    """A tuple argument, a naive datetime, a bad jid, jids that don't match: each refused
    with the sync client's error, and Redis left empty."""

    async def work(client: AsyncClient) -> None:
        with pytest.raises(TypeError, match=r"args\[0\] is tuple"):
            await client.enqueue(Record, (1, 2))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="aware datetime"):
            await client.enqueue_at(dt.datetime(2030, 1, 1), Record)
        with pytest.raises(ValueError, match="a jid is 1 to 128"):
            await client.enqueue(Record, 1, jid="has space")
        with pytest.raises(ValueError, match="2 jids for 3 argument lists"):
            await client.enqueue_many(Record, [[1], [2], [3]], jids=["a", "b"])
        with pytest.raises(ValueError, match=r"jids given more than once: \['a'\]"):
            await client.enqueue_many(Record, [[1], [2]], jids=["a", "a"])

    with_async_client(cogworker.Config(redis_url=redis_url), work)
    assert rc.keys("cogworker:*") == []


@pytest.mark.parametrize("job_class", [Record, RecordAsync], ids=["sync-job", "async-job"])
def test_either_client_pushes_either_kind_of_job_alike(
    rc: redis.Redis, redis_url: str, client: cogworker.Client, job_class: type[cogworker.Job]
) -> None:
    """A sync or an async job, enqueued by Client or by AsyncClient (now and scheduled, plain
    and with a jid), lands in the same place with the same payload but for its id and times."""
    config = cogworker.Config(redis_url=redis_url)
    client.enqueue(job_class, "x", [1])
    client.enqueue(job_class, "y", jid="sync-jid")
    client.enqueue_in(30, job_class, "z")

    async def work(async_client: AsyncClient) -> None:
        await async_client.enqueue(job_class, "x", [1])
        await async_client.enqueue(job_class, "y", jid="async-jid")
        await async_client.enqueue_in(30, job_class, "z")

    with_async_client(config, work)

    sync_plain, sync_jid, async_plain, async_jid = reversed(queue_payloads(rc, "default"))
    assert shape(async_plain) == shape(sync_plain)
    assert set(async_plain) == set(sync_plain)
    assert shape(async_jid) == {
        **shape(sync_jid),
        "unique_lock": sync_jid["unique_lock"].replace("sync-jid", "async-jid"),
    }
    (sync_later, _), (async_later, _) = sorted(
        zset_entries(rc, keys.schedule("default")), key=lambda entry: entry[1]
    )
    assert shape(async_later) == shape(sync_later)
    assert "enqueued_at" not in async_later


def test_a_unique_jobs_lock_is_taken_with_its_push_and_a_duplicate_refused(
    rc: redis.Redis, redis_url: str
) -> None:
    """200 concurrent enqueues of one unique job push exactly one, whose jid holds the lock;
    other arguments take another lock; a class key decides what is a duplicate."""

    async def work(client: AsyncClient) -> list[str | None]:
        jids = await asyncio.gather(*(client.enqueue(unique_jobs.Report, 7) for _ in range(200)))
        assert await client.enqueue(unique_jobs.Report, 8) is not None
        assert await client.enqueue(unique_jobs.Keyed, 1, "a") is not None
        assert await client.enqueue(unique_jobs.Keyed, 1, "b") is None
        return list(jids)

    jids = with_async_client(cogworker.Config(redis_url=redis_url), work)

    pushed = [jid for jid in jids if jid is not None]
    assert len(pushed) == 1
    queued = [job["jid"] for job in queue_payloads(rc, "default")]
    assert queued.count(pushed[0]) == 1
    assert len(queued) == 3
    [report] = [job for job in queue_payloads(rc, "default") if job["jid"] == pushed[0]]
    assert rc.get(report["unique_lock"]) == pushed[0].encode()
    assert rc.pttl(report["unique_lock"]) > 0


def test_a_callers_jid_is_pushed_once_however_often_the_enqueue_is_repeated(
    rc: redis.Redis, redis_url: str
) -> None:
    """enqueue, enqueue_in and enqueue_many with the caller's jids, each made twice: the
    jids come back both times and each is pushed once."""

    async def work(client: AsyncClient) -> list[Any]:
        answers: list[Any] = []
        for _ in range(2):
            answers.append(await client.enqueue(Record, 1, jid="order-1"))
            answers.append(await client.enqueue_in(60, Record, 2, jid="order-2"))
            answers.append(await client.enqueue_many(Record, [[3], [4]], jids=["o-3", "o-4"]))
        return answers

    answers = with_async_client(cogworker.Config(redis_url=redis_url), work)

    assert answers == ["order-1", "order-2", ["o-3", "o-4"]] * 2
    assert sorted(job["jid"] for job in queue_payloads(rc, "default")) == ["o-3", "o-4", "order-1"]
    assert [job["jid"] for job, _ in zset_entries(rc, keys.schedule("default"))] == ["order-2"]


def test_status_reads_a_tracked_jobs_status(redis_url: str) -> None:
    """A tracked job is `queued` once pushed; an untracked one, or an unknown jid, has none."""
    config = cogworker.Config(redis_url=redis_url, track_status=True)

    async def work(client: AsyncClient) -> list[str | None]:
        tracked = await client.enqueue(Record, 1)
        assert tracked is not None
        return [await client.status(tracked), await client.status("no-such-jid")]

    assert with_async_client(config, work) == ["queued", None]


def test_redis_away_is_an_enqueue_unavailable_error_naming_the_jids() -> None:
    """With nothing listening, enqueue and enqueue_many raise EnqueueUnavailableError (a
    RedisUnavailableError) naming the URL without its password and the jids not enqueued;
    status raises RedisUnavailableError."""
    config = cogworker.Config(redis_url="redis://user:secret@127.0.0.1:1/0")

    async def work(client: AsyncClient) -> list[BaseException]:
        errors: list[BaseException] = []
        for call in (
            client.enqueue(Record, "x", jid="lost-1"),
            client.enqueue_many(Record, [[1], [2]], jids=["lost-2", "lost-3"]),
            client.status("lost-1"),
        ):
            with pytest.raises(cogworker.RedisUnavailableError) as info:
                await call
            errors.append(info.value)
        return errors

    one, many, status = with_async_client(config, work)

    assert isinstance(one, cogworker.EnqueueUnavailableError)
    assert (one.pushed, one.unknown) == ((), ())  # refused: nothing was sent
    assert "job lost-1 was not enqueued" in str(one)
    assert isinstance(many, cogworker.EnqueueUnavailableError)
    assert (many.pushed, many.unknown) == ((), ())
    assert "these 2 jobs were not enqueued" in str(many)
    assert not isinstance(status, cogworker.EnqueueError)
    for error in (one, many, status):
        assert "user:***@127.0.0.1:1" in str(error)
        assert "secret" not in str(error)


@pytest.mark.parametrize("job_class", [Record, RecordAsync], ids=["sync-job", "async-job"])
def test_what_either_client_enqueues_is_run_by_a_real_worker(
    rc: redis.Redis,
    redis_url: str,
    workers: Workers,
    client: cogworker.Client,
    job_class: type[cogworker.Job],
) -> None:
    """A sync or an async job, enqueued by AsyncClient (now and 1 s later) and by Client,
    is run by `cogworker work`."""
    worker = workers.start()

    async def work(async_client: AsyncClient) -> list[str | None]:
        return [
            await async_client.enqueue(job_class, "now"),
            await async_client.enqueue_in(1, job_class, "later"),
        ]

    jids = [*with_async_client(cogworker.Config(redis_url=redis_url), work)]
    jids.append(client.enqueue(job_class, "sync client"))

    wait_until(
        lambda: all(jid is not None and rc.sismember("done", jid) for jid in jids),
        30,
        message=worker.log_tail,
    )
