"""Job classes and APP configs for the worker-process tests of tests/app.

Worker subprocesses import this module (the repo root is on their
PYTHONPATH) both as APP (`tests.app.jobs:fast_config`) and to load job
classes by their dotted path.  Jobs record what they did in the Redis named
by `$COGWORKER_TEST_REDIS_URL` (never `$COGWORKER_REDIS_URL`, which the test
suite points at a closed port on purpose); the testing-mode jobs record in
`RECEIVED`, in the caller's own process.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Coroutine
from typing import Any

import redis

import cogworker
from cogworker import Job
from tests.support.topology import plain_client

#: The environment variable naming the Redis that jobs record their side effects in.
SIDE_EFFECTS_URL_ENV = "COGWORKER_TEST_REDIS_URL"

# -- APP configs (the CLI's --redis-url supplies the Redis) ------------------

#: Short timings: due jobs are found within ~0.3 s, heartbeats every 0.2 s.
fast_config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.2,
    shutdown_timeout=2.0,
    concurrency=5,
)
#: The default APP attribute (`cogworker work tests.app.jobs`).
config = fast_config
#: For the 10,000-job run: the same, without a log line per job.
bulk_config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.5,
    shutdown_timeout=2.0,
    log_level="WARNING",
)
#: Basic fetch: jobs are popped outright, no in-progress list.
basic_config = cogworker.Config(
    poll_interval=0.2,
    heartbeat_interval=0.2,
    shutdown_timeout=2.0,
    concurrency=3,
    fetch="basic",
)
#: Not a Config: `cogworker work tests.app.jobs:not_a_config` must refuse it.
not_a_config = 42

# -- side effects -----------------------------------------------------------

_lock = threading.Lock()
_client: redis.Redis | None = None


def side_effects() -> redis.Redis:
    """This process's client for the side-effect Redis (one, shared by all threads)."""
    global _client
    with _lock:
        if _client is None:
            _client = plain_client(os.environ[SIDE_EFFECTS_URL_ENV])
        return _client


class JobBoomError(RuntimeError):
    """What the failing jobs raise."""


# -- jobs for real workers --------------------------------------------------


class Count(Job):
    """The cheapest side effect that still proves each run: SADD of the jid and one INCR."""

    def perform(self, number: int) -> None:
        pipe = side_effects().pipeline(transaction=False)
        pipe.sadd("count:jids", self.jid)
        pipe.incr("count:total")
        pipe.execute()


class Record(Job):
    """Records each run: its start time (`starts:JID`), run count (`runs:JID`), `done` set."""

    def perform(self, *args: Any) -> None:
        started = time.time()
        pipe = side_effects().pipeline(transaction=False)
        pipe.rpush(f"starts:{self.jid}", repr(started))
        pipe.incr(f"runs:{self.jid}")
        pipe.sadd("done", self.jid)
        pipe.incr("done:total")
        pipe.execute()


class RecordModules(Job):
    """Records the modules its worker process has loaded (`modules:JID`, a JSON list)."""

    def perform(self) -> None:
        side_effects().set(f"modules:{self.jid}", json.dumps(sorted(sys.modules)))


class RecordHeavy(Record, queue="heavy"):
    """`Record` on the `heavy` queue."""


class RecordLight(Record, queue="light"):
    """`Record` on the `light` queue."""


class RecordToml(Record, queue="tomlq"):
    """`Record` on the `tomlq` queue (named only by a --config file)."""


class AlwaysFails(Job):
    """Records its start and the time it fails (`fails:JID`), then raises JobBoomError."""

    def perform(self, *args: Any) -> None:
        client = side_effects()
        client.rpush(f"starts:{self.jid}", repr(time.time()))
        client.incr(f"runs:{self.jid}")
        client.rpush(f"fails:{self.jid}", repr(time.time()))
        raise JobBoomError(f"boom {args!r}")


class NoRetryFalse(AlwaysFails, retry=False):
    """Fails with `retry=False`: straight to dead."""


class NoRetryZero(AlwaysFails, retry=0):
    """Fails with `retry=0`: straight to dead."""


class FailsTwiceRetried(AlwaysFails, retry=2):
    """Fails with `retry=2` and a 1 s delay: three runs, then dead."""

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, Any]) -> float:
        return 1.0


class Sleeper(Job):
    """Adds its jid to `started`, sleeps `seconds`, then adds it to `finished`."""

    def perform(self, seconds: float) -> None:
        side_effects().sadd("started", self.jid)
        time.sleep(seconds)
        side_effects().sadd("finished", self.jid)


class Gate(Job):
    """Adds its jid to `started`, waits (up to 30 s) for the key `gate:NAME`, then `finished`."""

    def perform(self, name: str) -> None:
        client = side_effects()
        client.sadd("started", self.jid)
        deadline = time.monotonic() + 30.0
        while not client.exists(f"gate:{name}") and time.monotonic() < deadline:
            time.sleep(0.02)
        client.sadd("finished", self.jid)


# -- jobs for the testing modes (no Redis: they record in this process) -----

#: (class name, jid, args) of every run in this process, in order.
RECEIVED: list[tuple[str, str, tuple[Any, ...]]] = []


class Collect(Job):
    """Appends what it received to `RECEIVED`."""

    def perform(self, *args: Any) -> None:
        RECEIVED.append(("Collect", self.jid, args))


class CollectFails(Job):
    """Appends what it received to `RECEIVED`, then raises JobBoomError."""

    def perform(self, *args: Any) -> None:
        RECEIVED.append(("CollectFails", self.jid, args))
        raise JobBoomError(f"collect fails {args!r}")


class Countdown(Job):
    """Appends `n` to `RECEIVED` and enqueues itself with `n - 1` until 0."""

    def perform(self, n: int) -> None:
        RECEIVED.append(("Countdown", self.jid, (n,)))
        if n > 0:
            Countdown.perform_async(n - 1)


class CollectAsync(Job):
    """An async job: yields to its event loop once, then appends what it received."""

    async def perform(self, *args: Any) -> None:
        await asyncio.sleep(0)
        RECEIVED.append(("CollectAsync", self.jid, args))


class CollectAsyncFails(Job):
    """An async job: appends what it received after yielding once, then raises JobBoomError."""

    async def perform(self, *args: Any) -> None:
        await asyncio.sleep(0)
        RECEIVED.append(("CollectAsyncFails", self.jid, args))
        raise JobBoomError(f"collect async fails {args!r}")


class HandsBackACoroutine(Job):
    """A sync `perform` that returns a coroutine instead of running: its body never runs."""

    def perform(self, *args: Any) -> Coroutine[Any, Any, None]:  # type: ignore[override]
        return asyncio.sleep(0)


class RecordAsync(Record):
    """`Record` as an async job: the same side effects, after yielding to its loop once."""

    async def perform(self, *args: Any) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        super().perform(*args)


class CountdownAsync(Job):
    """An async job: appends `n` to `RECEIVED` and enqueues itself (awaited) with `n - 1`."""

    async def perform(self, n: int) -> None:
        RECEIVED.append(("CountdownAsync", self.jid, (n,)))
        if n > 0:
            await CountdownAsync.aperform_async(n - 1)
