"""Job classes, hooks, middleware and APP configs of the failure-policy tests.

Worker subprocesses import this module both as APP
(`tests.policy.jobs:shared_config`) and to load job classes by their dotted
path.  Every hook records what it was handed as one JSON line, RPUSHed to
`policy:hooks` in the Redis named by `$COGWORKER_TEST_REDIS_URL` (the suite
points `$COGWORKER_REDIS_URL` at a closed port on purpose), and appended to
`LOCAL_RECORDS` in this process (what the in-process testing-mode test reads).

A death hook also records whether its job was already in the dead set and
whether it was still on an in-progress list when the hook ran.

Each job has an async variant (`AsyncFails`, ..., see `tests.support.async_variants`)
with the same hooks: the suite runs every case on both kinds.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.retry import Retry

import cogworker
from cogworker import DISCARD, KILL, Job, RunContext
from tests.support.async_variants import Paced, register
from tests.support.topology import plain_client

#: The environment variable naming the Redis the hooks and jobs record in.
SIDE_EFFECTS_URL_ENV = "COGWORKER_TEST_REDIS_URL"
#: The list every hook call is recorded on (one JSON object per entry).
HOOKS_KEY = "policy:hooks"
#: Set of jids whose run succeeded.
DONE_KEY = "policy:done"
#: Where the outage job says it is about to fail.
OUTAGE_STARTED_KEY = "policy:outage:started"
DEAD_KEY = "cogworker:{q:default}:dead"
IN_PROGRESS_PATTERN = "cogworker:{q:*}:inprogress:*"

#: What `ApplicationJob.retry_in` answers, by the job's first argument.
YEAR_AND_MORE = 2 * 365 * 86_400
ANSWERS: dict[str, object] = {
    "int": 3600,
    "float": 1234.5,
    "zero": 0,
    "none": None,
    "kill": KILL,
    "discard": DISCARD,
    "negative": -5,
    "nan": math.nan,
    "inf": math.inf,
    "bool": True,
    "string": "soon",
    "year": YEAR_AND_MORE,
    "hour": 3600,
}
#: The first argument that makes `ApplicationJob.retry_in` raise.
RAISE = "raises"
#: What `OneParamJob.retry_in` answers (plus its count).
ONE_PARAM_DELAY = 600.0

#: The names `death_handlers` entries record under, in their configured order.
HANDLER_NAMES = ("first_handler", "mutating_handler", "raising_handler", "star_handler")
CLASS_HOOK = "retries_exhausted"

#: Every hook call made in this process, as the JSON line also sent to Redis.
LOCAL_RECORDS: list[str] = []

_lock = threading.Lock()
_client: redis.Redis | None = None


class PolicyBoomError(RuntimeError):
    """What the failing jobs raise."""


class HookBoomError(RuntimeError):
    """What a `retry_in` hook raises when told to."""


class HandlerBoomError(RuntimeError):
    """What `raising_handler` raises."""


class ExhaustedBoomError(RuntimeError):
    """What `RaisingExhaustedJob.retries_exhausted` raises."""


class MiddlewareBoomError(RuntimeError):
    """What `raise_after` raises once `MiddlewareRaisesJob` has performed."""


# -- recording ----------------------------------------------------------------


def side_effects() -> redis.Redis | None:
    """This process's client for the side-effect Redis, or None when none is named."""
    global _client
    url = os.environ.get(SIDE_EFFECTS_URL_ENV)
    if not url:
        return None
    with _lock:
        if _client is None:
            _client = plain_client(
                url,
                socket_timeout=10.0,
                # Enough to get past a connection a Redis restart broke, not more.
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 5),
                retry_on_error=[redis.ConnectionError, redis.TimeoutError],
            )
        return _client


def _has_jid(raw: bytes, jid: object) -> bool:
    try:
        return bool(json.loads(raw).get("jid") == jid)
    except (ValueError, AttributeError):
        return False


def _where(client: redis.Redis, jid: object) -> dict[str, bool]:
    in_dead = any(_has_jid(raw, jid) for raw in client.zrange(DEAD_KEY, 0, -1))
    in_progress = any(
        _has_jid(raw, jid)
        for key in client.scan_iter(match=IN_PROGRESS_PATTERN)
        for raw in client.lrange(key, 0, -1)
    )
    return {"in_dead": in_dead, "in_progress": in_progress}


def _exception_fields(exception: object) -> dict[str, object]:
    kind = type(exception)
    return {"exc_class": f"{kind.__module__}.{kind.__qualname__}", "exc_message": str(exception)}


def record(hook: str, *, jid: object = None, where: bool = False, **fields: object) -> None:
    """Record one hook call (in this process, and in the side-effect Redis if named)."""
    client = side_effects()
    data: dict[str, object] = {"hook": hook, "jid": jid, **fields}
    if where and client is not None:
        with contextlib.suppress(redis.RedisError):
            data.update(_where(client, jid))
    data.update(pid=os.getpid(), at=time.time())
    line = json.dumps(data, default=repr)
    LOCAL_RECORDS.append(line)
    if client is not None:
        # A hook called while Redis is away (the outage test) just isn't recorded there.
        with contextlib.suppress(redis.RedisError):
            client.rpush(HOOKS_KEY, line)


def record_death(hook: str, job: dict[str, Any], exception: object, **fields: object) -> None:
    """Record a death hook's call: the job copy it got (as is), the exception, where the job is."""
    record(
        hook,
        jid=job.get("jid"),
        where=True,
        job=json.loads(json.dumps(job, default=repr)),
        **_exception_fields(exception),
        **fields,
    )


def _note(key: str, value: object) -> None:
    client = side_effects()
    if client is not None:
        client.rpush(key, json.dumps(value))


# -- jobs ---------------------------------------------------------------------


class ApplicationJob(Job):
    """The app-wide base class: the whole failure policy lives here and is inherited.

    `retry_in` answers `ANSWERS[first argument]` (raises for `RAISE`);
    `retries_exhausted` records its call.
    """

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, Any]) -> object:
        """Record the call, then answer by the job's first argument."""
        record(
            "retry_in",
            jid=job.get("jid"),
            cls=cls.__name__,
            count=count,
            job=job,
            **_exception_fields(exception),
        )
        case = job["args"][0] if job.get("args") else None
        if case == RAISE:
            raise HookBoomError("retry_in exploded")
        return ANSWERS.get(str(case))

    @classmethod
    def retries_exhausted(cls, job: dict[str, Any], exception: BaseException) -> None:
        """Record the call (with the class it was called on)."""
        record_death(CLASS_HOOK, job, exception, cls=cls.__name__)


class Fails(ApplicationJob):
    """Records each run's start; raises `PolicyBoomError("boom: CASE")`.

    With `succeed_after` n > 0, runs after the n-th succeed (the jid joins `policy:done`).
    """

    def perform(self, case: str, succeed_after: int = 0) -> None:
        _note(f"policy:runs:{self.jid}", time.time())
        client = side_effects()
        runs = client.llen(f"policy:runs:{self.jid}") if client is not None else 1
        if succeed_after and runs > succeed_after:
            if client is not None:
                client.sadd(DONE_KEY, self.jid)
            return
        raise PolicyBoomError(f"boom: {case}")


class FailsRetryFalse(Fails, retry=False):
    """`Fails` with `retry=False`."""


class FailsRetryZero(Fails, retry=0):
    """`Fails` with `retry=0`."""


class FailsRetryTwo(Fails, retry=2):
    """`Fails` with `retry=2`: with the "zero" answer, three quick runs, then dead."""


class InheritingJob(Fails):
    """Defines nothing: both hooks and `perform` are inherited."""


class RaisingExhaustedJob(Fails, retry=False):
    """Its own `retries_exhausted` records, then raises `ExhaustedBoomError`."""

    @classmethod
    def retries_exhausted(cls, job: dict[str, Any], exception: BaseException) -> None:
        """Record the call, then raise."""
        record_death(CLASS_HOOK, job, exception, cls=cls.__name__)
        raise ExhaustedBoomError("retries_exhausted exploded")


class OneParamJob(Job):
    """Fails; its `retry_in` takes only `count` (and answers 600 + count seconds)."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Record the call with the one argument it accepts."""
        record("retry_in", cls=cls.__name__, count=count)
        return ONE_PARAM_DELAY + count

    def perform(self) -> None:
        raise PolicyBoomError("boom: one_param")


class SwallowedJob(Fails):
    """Fails; the `swallow_errors` server middleware swallows its error."""


class MiddlewareRaisesJob(ApplicationJob):
    """Succeeds (joins `policy:done`); the `raise_after` middleware then raises."""

    def perform(self, case: str) -> None:
        client = side_effects()
        if client is not None:
            client.sadd(DONE_KEY, self.jid)


class NotAJob:
    """Named by a raw payload: it has a recording `retry_in` but isn't a `Job`, so can't load."""

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, Any]) -> object:
        """Record the call (it must never happen)."""
        record("retry_in", jid=job.get("jid"), cls=cls.__name__, count=count)
        return 1


class OrphanJob(ApplicationJob):
    """Records its run, then SIGKILLs its own worker process: it orphans itself every time."""

    def perform(self) -> None:
        _note(f"policy:runs:{self.jid}", os.getpid())
        os.kill(os.getpid(), signal.SIGKILL)


class OutageJob(ApplicationJob, Paced, retry=False):
    """Says it started, waits (up to 30 s) until its Redis stops answering, then fails."""

    def steps(self, case: str) -> Generator[float, None, None]:
        """Poll the Redis until it is away, then raise."""
        url = os.environ[SIDE_EFFECTS_URL_ENV]
        probe = redis.Redis.from_url(
            url, socket_timeout=1.0, socket_connect_timeout=1.0, retry=Retry(NoBackoff(), 0)
        )
        try:
            probe.rpush(OUTAGE_STARTED_KEY, self.jid)
            deadline = time.monotonic() + 30.0
            while time.monotonic() < deadline:
                try:
                    probe.ping()
                except redis.RedisError:
                    break
                yield 0.02
        finally:
            probe.close()
        raise PolicyBoomError("boom: outage")


class OutageRetryJob(OutageJob, retry=True):
    """`OutageJob` with retries left (its `retry_in` answers by `case`)."""


class Sentinel(Job):
    """Succeeds (joins `policy:done`): proof that a worker still takes jobs."""

    def perform(self) -> None:
        client = side_effects()
        if client is not None:
            client.sadd(DONE_KEY, self.jid)


register(
    Fails,
    FailsRetryFalse,
    FailsRetryZero,
    FailsRetryTwo,
    InheritingJob,
    RaisingExhaustedJob,
    OneParamJob,
    SwallowedJob,
    MiddlewareRaisesJob,
    OrphanJob,
    OutageJob,
    OutageRetryJob,
)


# -- death handlers (Config.death_handlers, in this order) ----------------------


def first_handler(job: dict[str, Any], exception: BaseException) -> None:
    """Records its call."""
    record_death("first_handler", job, exception, nargs=2)


def mutating_handler(job: dict[str, Any]) -> None:
    """Takes one parameter (the job only), records, then mutates its copy of the job."""
    record("mutating_handler", jid=job.get("jid"), where=True, job=job, nargs=1)
    job["args"].append("mutated")
    job["error_message"] = "mutated by a handler"
    job["mutated"] = True


def raising_handler(job: dict[str, Any], exception: BaseException) -> None:
    """Records its call, then raises `HandlerBoomError`."""
    record_death("raising_handler", job, exception, nargs=2)
    raise HandlerBoomError("handler exploded")


def star_handler(*args: Any) -> None:
    """Takes `*args`: records how many it got (the job and the exception)."""
    job, exception = args[0], args[1]
    record_death("star_handler", job, exception, nargs=len(args))


HANDLERS = (first_handler, mutating_handler, raising_handler, star_handler)


# -- server middleware ----------------------------------------------------------


def _runs(ctx: RunContext, job_class: type[Job]) -> bool:
    """Whether the run is of `job_class` (or of its async variant)."""
    return ctx.job_class is not None and issubclass(ctx.job_class, job_class)


def swallow_errors(ctx: RunContext, run: Callable[[], None]) -> None:
    """Swallows whatever `SwallowedJob` raises (and records that it did)."""
    if not _runs(ctx, SwallowedJob):
        run()
        return
    try:
        run()
    except Exception as error:
        record("middleware_swallowed", jid=ctx.job.jid, **_exception_fields(error))


def raise_after(ctx: RunContext, run: Callable[[], None]) -> None:
    """Raises `MiddlewareBoomError` after `MiddlewareRaisesJob` performed successfully."""
    run()
    if _runs(ctx, MiddlewareRaisesJob):
        raise MiddlewareBoomError("middleware says no")


# -- APP configs (the CLI's --redis-url supplies the Redis) -------------------

_FAST: dict[str, Any] = {
    "poll_interval": 0.2,
    "heartbeat_interval": 0.3,
    "shutdown_timeout": 2.0,
}

#: One worker runs every table row and scope point that needs no crash or outage.
shared_config = cogworker.Config(
    **_FAST,
    concurrency=4,
    server_middleware=(swallow_errors, raise_after),
    death_handlers=HANDLERS,
)
#: A job's process keeps dying: buried after 2 orphanings (max_orphanings=1).
orphan_config = cogworker.Config(
    **_FAST,
    concurrency=1,
    orphan_threshold=2.0,
    max_orphanings=1,
    death_handlers=HANDLERS,
)
#: Redis goes away while a job fails: its failure is filed later by a reconcile pass.
#: (A short orphan_threshold also makes the reconcile passes frequent: every 0.5 s.)
outage_config = cogworker.Config(
    **_FAST, concurrency=1, orphan_threshold=2.0, death_handlers=HANDLERS
)
