"""Helpers of the worker-process tests: starting workers, reading what they left in Redis."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import attrs
import redis

import cogworker
from cogworker import AsyncClient
from cogworker.adapters import redis_keys as keys
from tests.app.jobs import SIDE_EFFECTS_URL_ENV
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until

FAST_APP = "tests.app.jobs:fast_config"
T = TypeVar("T")


def with_async_client(config: cogworker.Config, work: Callable[[AsyncClient], Awaitable[T]]) -> T:
    """Run `work` with an AsyncClient of `config` on an event loop of its own, then close it."""

    async def main() -> T:
        async with AsyncClient(config) as client:
            return await work(client)

    return asyncio.run(main())


#: The two clients a test can be parametrized over.
CLIENT_KINDS = ("Client", "AsyncClient")


def enqueue_with(
    kind: str, config: cogworker.Config, job_class: type[cogworker.Job], *args: Any, jid: str
) -> str | None:
    """One enqueue through a new client of `kind` (see `CLIENT_KINDS`), closed after."""
    if kind == "AsyncClient":
        return with_async_client(config, lambda client: client.enqueue(job_class, *args, jid=jid))
    client = cogworker.Client(config)
    try:
        return client.enqueue(job_class, *args, jid=jid)
    finally:
        client.close()


def status_with(kind: str, config: cogworker.Config, jid: str) -> str | None:
    """One status read through a new client of `kind`, closed after."""
    if kind == "AsyncClient":
        return with_async_client(config, lambda client: client.status(jid))
    client = cogworker.Client(config)
    try:
        return client.status(jid)
    finally:
        client.close()


@attrs.define
class Workers:
    """Starts worker processes on one Redis; their jobs record side effects in the same one."""

    factory: CogworkerFactory
    redis_url: str

    def start(
        self,
        app: str = FAST_APP,
        *,
        concurrency: int | None = None,
        queues: Iterable[str] = (),
        extra_args: Iterable[str] = (),
    ) -> CogworkerProcess:
        """Start one `cogworker work APP` process (it runs in the background)."""
        return self.factory(
            app,
            redis_url=self.redis_url,
            concurrency=concurrency,
            queues=queues,
            extra_args=extra_args,
            env={SIDE_EFFECTS_URL_ENV: self.redis_url},
        )


def identities(rc: redis.Redis) -> list[str]:
    """The registered worker processes."""
    return sorted(member.decode() for member in rc.smembers("cogworker:processes"))


def wait_for_processes(
    rc: redis.Redis, count: int, *workers: CogworkerProcess, timeout: float = 20.0
) -> list[str]:
    """Wait until `count` processes have registered; their identities."""

    def registered() -> list[str] | None:
        found = identities(rc)
        return found if len(found) >= count else None

    return wait_until(
        registered,
        timeout,
        message=lambda: (
            f"{count} worker processes never registered; logs:\n"
            + "\n---\n".join(worker.log_tail() for worker in workers)
        ),
    )


def process_hash(rc: redis.Redis, identity: str) -> dict[str, str]:
    """A process's heartbeat hash, as text."""
    return {k.decode(): v.decode() for k, v in rc.hgetall(keys.process(identity)).items()}


def zset_entries(rc: redis.Redis, key: str) -> list[tuple[dict[str, Any], float]]:
    """The decoded entries of a sorted set (retry, dead, schedule) with their scores."""
    return [(json.loads(member), score) for member, score in rc.zrange(key, 0, -1, withscores=True)]


def queue_payloads(rc: redis.Redis, name: str) -> list[dict[str, Any]]:
    """The decoded jobs on a queue."""
    return [json.loads(raw) for raw in rc.lrange(keys.queue(name), 0, -1)]


def start_times(rc: redis.Redis, jid: str) -> list[float]:
    """The start times a `Record`-style job wrote for `jid`, in order."""
    return [float(value) for value in rc.lrange(f"starts:{jid}", 0, -1)]


def runs(rc: redis.Redis, jid: str) -> int:
    """How many times a `Record`-style job ran with `jid`."""
    return int(rc.get(f"runs:{jid}") or 0)


def logs(*workers: CogworkerProcess) -> str:
    """The tails of the workers' logs, for failure messages."""
    return "\n---\n".join(worker.log_tail() for worker in workers)


def last_beat(rc: redis.Redis, identity: str) -> float:
    """The time (Redis's clock) of a process's latest heartbeat; 0 if it has none."""
    return float(rc.hget(keys.process(identity), "beat") or 0)


def wait_for_beats_over(
    rc: redis.Redis, identity: str, seconds: float, worker: CogworkerProcess
) -> None:
    """Wait until the process has kept beating for `seconds` more (its loops went round)."""
    since = last_beat(rc, identity)
    wait_until(
        lambda: last_beat(rc, identity) >= since + seconds,
        seconds + 10.0,
        message=lambda: f"{identity} stopped beating; log:\n{worker.log_tail()}",
    )


def pause_reads(rc: redis.Redis) -> int:
    """How many reads of pause flags Redis has served (`EXISTS`, in the fetch scripts or
    after a blocking wait): one per queue a fetch looks at, from any worker."""
    stats = rc.info("commandstats").get("cmdstat_exists")
    return int(stats["calls"]) if stats else 0


def wait_for_fetches(rc: redis.Redis, count: int, worker: CogworkerProcess) -> None:
    """Wait until the workers have read `count` more pause flags from now (at least one per
    fetch): a job they could take by then, they have taken."""
    start = pause_reads(rc)
    wait_until(
        lambda: pause_reads(rc) >= start + count,
        15.0,
        message=lambda: f"the worker stopped fetching; log:\n{worker.log_tail()}",
    )
